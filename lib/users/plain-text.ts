/**
 * Characters no name or email holds (docs/api.md#post-apiusers): the control characters (Unicode
 * category Cc: U+0000–U+001F, U+007F–U+009F) and the line and paragraph separators U+2028/U+2029.
 * Stored, they would break lines, logs and CSV exports downstream, or hide text (NUL) in a value
 * that looks shorter than it is. Format characters (Cf), such as the zero-width joiners that
 * Persian and Indic names need, stay allowed.
 */
const CONTROL_CHARACTERS = /[\p{Cc}\p{Zl}\p{Zp}]/u;

/** Whether `value` is free of the characters above; the generated user validators call it. */
export const isPlainText = (value: string): boolean => !CONTROL_CHARACTERS.test(value);
