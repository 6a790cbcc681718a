/**
 * The key email addresses are compared on, case-insensitively (the users' uniqueness, the import's
 * dedupe and its match against the destination's users).
 */
const BEYOND_ASCII = /[\u0080-\uffff]/;

/**
 * Lower case, and beyond ASCII lower, upper and lower case again: lower-casing alone leaves pairs
 * apart that differ only in case, as `ß` and `SS` (`ß` stays, `SS` becomes `ss`) or a Greek word's
 * final sigma (`Σ` at a word's end lower-cases to `ς`, where its writer may have typed `σ`).
 * Upper-casing brings both sides of such pairs to one form (`SS`, `Σ`), and lower-casing first
 * makes that so for capitals whose upper case is themselves too (`ẞ`, lower `ß`, upper `SS`).
 * ASCII addresses, nearly all of them, take the short way.
 */
export const emailKey = (email: string): string => {
  const lower = email.toLowerCase();
  return BEYOND_ASCII.test(lower) ? lower.toUpperCase().toLowerCase() : lower;
};
