import { compareDigitStrings } from '../digit-strings.ts';

/** A version as its dotted integer components, each kept as digits (they may exceed 2^53). */
export type Version = readonly string[];

// The numeric part at the start; whatever follows (` (25A354)`, `-beta`, `.beta`) is a suffix.
const NUMERIC_PART = /^\s*(\d+(?:\.\d+)*)/;

/** Parses `15.10`, `26.0 (25A354)`, `15.1-beta`; anything not starting with a digit is unparsable. */
export const parseVersion = (text: string): Version | undefined => {
  const match = NUMERIC_PART.exec(text);
  return match?.[1] === undefined ? undefined : match[1].split('.');
};

/**
 * Component by component as integers; a missing trailing component counts as 0 (`15` = `15.0.0`).
 * Takes version text (`'15.10'`, suffixes ignored) or a pre-parsed Version; text that does not parse
 * sorts before every version, so the order stays total.
 */
export const compareVersions = (a: Version | string, b: Version | string): -1 | 0 | 1 => {
  const left = typeof a === 'string' ? parseVersion(a) : a;
  const right = typeof b === 'string' ? parseVersion(b) : b;
  if (left === undefined || right === undefined) return left === right ? 0 : left === undefined ? -1 : 1;
  const length = Math.max(left.length, right.length);
  for (let index = 0; index < length; index += 1) {
    const order = compareDigitStrings(left[index] ?? '0', right[index] ?? '0');
    if (order !== 0) return order;
  }
  return 0;
};

/**
 * Equal is latest; a device whose version does not parse is never latest, and neither is any
 * device against a reference that does not parse. Pass the reference pre-parsed to
 * decide many devices against it.
 */
export const isLatest = (version: string | undefined, reference: Version | string): boolean => {
  if (version === undefined) return false;
  const parsedReference = typeof reference === 'string' ? parseVersion(reference) : reference;
  const parsed = parseVersion(version);
  return parsed !== undefined && parsedReference !== undefined && compareVersions(parsed, parsedReference) >= 0;
};
