import { compareDigitStrings } from '../values/digit-strings.ts';

/**
 * An OS version as docs/api.md compares it: the dotted integer components, each kept as digits
 * (they may exceed 2^53), and the Rapid Security Response / Background Security Improvement level,
 * a single lower-case letter (`26.3.1 (a)`), when there is one.
 */
export interface Version {
  readonly numbers: readonly string[];
  readonly response: string | undefined;
}

// The numeric part at the start; whatever follows (` (25A354)`, `-beta`, `.beta`) is a suffix, but
// for a response level: one lower-case letter in parentheses right after the numbers (`(a)`, also
// before punctuation: `26.3.1 (a),`), not the start of a longer word such as `(a)b`.
const VERSION_TEXT = /^\s*(\d+(?:\.\d+)*)(?:\s*\(([a-z])\)(?![A-Za-z0-9]))?/;
/** Jamf's `operatingSystem.rapidSecurityResponse`: `(a)`, or the bare letter. */
const RESPONSE_FIELD = /^\s*(?:\(([a-z])\)|([a-z]))\s*$/;

/** The response level of text such as Jamf's `rapidSecurityResponse` field (`(a)`), or undefined. */
export const responseLevel = (text: string | undefined): string | undefined => {
  const match = text === undefined ? null : RESPONSE_FIELD.exec(text);
  return match?.[1] ?? match?.[2] ?? undefined;
};

/**
 * Parses `15.10`, `26.0 (25A354)`, `15.1-beta`, `26.3.1 (a)`; anything not starting with a digit is
 * unparsable. `response` (the device's own field) names the response level where the text has none.
 */
export const parseVersion = (text: string, response?: string): Version | undefined => {
  const match = VERSION_TEXT.exec(text);
  if (match?.[1] === undefined) return undefined;
  return { numbers: match[1].split('.'), response: match[2] ?? responseLevel(response) };
};

/** `26.3.1 (a)`, `15.7`: how a version reads in logs and keys. */
export const formatVersion = (version: Version): string =>
  version.response === undefined ? version.numbers.join('.') : `${version.numbers.join('.')} (${version.response})`;

/**
 * Component by component as integers; a missing trailing component counts as 0 (`15` = `15.0.0`);
 * between equal numbers, a response level ranks above none and by letter:
 * `26.3.1` < `26.3.1 (a)` < `26.3.1 (c)` < `26.3.2`. No version (text that did not parse) sorts
 * before every version, so the order stays total.
 */
export const compareVersions = (left: Version | undefined, right: Version | undefined): -1 | 0 | 1 => {
  if (left === undefined || right === undefined) return left === right ? 0 : left === undefined ? -1 : 1;
  const length = Math.max(left.numbers.length, right.numbers.length);
  for (let index = 0; index < length; index += 1) {
    const order = compareDigitStrings(left.numbers[index] ?? '0', right.numbers[index] ?? '0');
    if (order !== 0) return order;
  }
  if (left.response === right.response) return 0;
  if (left.response === undefined) return -1;
  if (right.response === undefined) return 1;
  return left.response < right.response ? -1 : 1;
};

/**
 * The major release a version belongs to, as the latest-OS feed groups them: the first component
 * (`26`, `15`), and for the `10.x` era the first two (`10.15`).
 */
export const majorOf = (version: Version): string =>
  version.numbers[0] !== undefined && BigInt(version.numbers[0]) === 10n
    ? `10.${BigInt(version.numbers[1] ?? '0')}`
    : String(BigInt(version.numbers[0] ?? '0'));

/**
 * Equal is latest; a device whose version does not parse is never latest, and neither is any
 * device against a reference that does not parse.
 */
export const isAtLeast = (version: Version | undefined, reference: Version | undefined): boolean =>
  version !== undefined && reference !== undefined && compareVersions(version, reference) >= 0;
