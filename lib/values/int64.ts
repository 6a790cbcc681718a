/**
 * Signed 64-bit integers as exact decimal text. Ids of the chat export and of the ticketing
 * destination may exceed 2^53, where a JavaScript number would silently round them, so they are
 * never turned into numbers.
 */
const INT64_MAX = '9223372036854775807';
const INT64_MIN_MAGNITUDE = '9223372036854775808';

/**
 * `text` as canonical decimal text ("-0" → "0", leading zeros and a `+` dropped) when it spells a
 * signed 64-bit integer (optional sign, digits only, nothing around them), else null.
 */
export const canonicalInt64 = (text: string): string | null => {
  const length = text.length;
  const first = text.charCodeAt(0);
  const negative = first === 45; // '-'
  let start = negative || first === 43 ? 1 : 0; // '-' or '+'
  if (start === length) return null;
  for (let index = start; index < length; index += 1) {
    const code = text.charCodeAt(index);
    if (code < 48 || code > 57) return null;
  }
  while (start < length - 1 && text.charCodeAt(start) === 48) start += 1;
  const digitCount = length - start;
  if (digitCount > 19) return null;
  // The canonical text is usually the input itself: no copy on the import's hot path.
  const digits = start === 0 ? text : text.slice(start);
  // Same length decimal strings compare like the numbers they spell.
  if (digitCount === 19 && digits > (negative ? INT64_MIN_MAGNITUDE : INT64_MAX)) return null;
  if (digits === '0') return '0';
  return negative ? `-${digits}` : digits;
};
