/**
 * Compares two strings of decimal digits as the integers they spell, of any size. Versions and
 * Jamf ids may exceed 2^53, where going through Number would silently round them.
 */
export const compareDigitStrings = (a: string, b: string): -1 | 0 | 1 => {
  const left = stripLeadingZeros(a);
  const right = stripLeadingZeros(b);
  if (left.length !== right.length) return left.length < right.length ? -1 : 1;
  if (left === right) return 0;
  return left < right ? -1 : 1;
};

/** `007` and `7` are the same integer; an all-zero string is `0`. */
export const stripLeadingZeros = (digits: string): string => {
  const stripped = digits.replace(/^0+/, '');
  return stripped === '' ? '0' : stripped;
};
