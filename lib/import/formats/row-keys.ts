/** A well-mixed 32-bit hash of an int64's halves (int64Halves), for tables indexed by its low bits. */
export const hashHalves = (high: number, low: number): number => {
  let hash = Math.imul(low ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(high, 0xc2b2ae35);
  hash ^= hash >>> 15;
  hash = Math.imul(hash, 0x2c1b3c6d);
  return hash ^ (hash >>> 12);
};

/**
 * The two's-complement halves of a canonical int64 text (parse-fields' `parseInt64` output) into
 * `into[0]` (high) and `into[1]` (low), the form Int64Set keys take: computed where the row is
 * parsed, so the thread keeping the set only compares numbers.
 */
export const int64Halves = (text: string, into: Int32Array): void => {
  const negative = text.charCodeAt(0) === 45; // '-'
  // The magnitude as high·2^32 + low, in doubles: every intermediate stays below 2^53.
  let high = 0;
  let low = 0;
  const digitCount = negative ? text.length - 1 : text.length;
  if (digitCount <= 15) {
    // Exact as a double. Summed by hand: Number() on a substring of the CSV text is a slow runtime call.
    let magnitude = 0;
    for (let index = negative ? 1 : 0; index < text.length; index += 1) magnitude = magnitude * 10 + (text.charCodeAt(index) - 48);
    high = Math.floor(magnitude / 4294967296);
    low = magnitude - high * 4294967296;
  } else {
    for (let index = negative ? 1 : 0; index < text.length; index += 1) {
      low = low * 10 + (text.charCodeAt(index) - 48);
      const carry = Math.floor(low / 4294967296);
      low -= carry * 4294967296;
      high = high * 10 + carry;
    }
  }
  // Two's complement of −magnitude: −(h·2^32 + l) = (~h + (l === 0)) · 2^32 + (2^32 − l) mod 2^32.
  into[0] = negative && (high !== 0 || low !== 0) ? (low === 0 ? -high : -high - 1) | 0 : high | 0;
  into[1] = negative && (high !== 0 || low !== 0) ? (4294967296 - low) | 0 : low | 0;
};

/**
 * A copy of `text` that does not share memory with the string it was cut from: V8 substrings point
 * into their parent, and a key kept for the whole run must not pin a megabyte-sized input chunk.
 */
export const ownedCopy = (text: string): string => JSON.parse(JSON.stringify(text)) as string;
