import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareVersions, isLatest, parseVersion } from '../../../lib/latest-os/version.ts';

const component = fc.oneof(fc.nat({ max: 30 }).map(String), fc.bigInt({ min: 0n, max: 10n ** 30n }).map(String));
const version = fc.array(component, { minLength: 1, maxLength: 5 });
const cmp = (a: string, b: string) => compareVersions(parseVersion(a)!, parseVersion(b)!);

describe('parseVersion', () => {
  it.each([
    ['15.10', ['15', '10']],
    ['26.0 (25A354)', ['26', '0']],
    ['15.1-beta', ['15', '1']],
    ['14.7.1', ['14', '7', '1']],
    ['  15 ', ['15']],
    ['15.', ['15']],
  ])('reads %j as its numeric part', (text, expected) => {
    expect(parseVersion(text)).toEqual(expected);
  });

  it.each(['', 'macOS 15', 'beta', '.15', '-1'])('finds no version in %j', (text) => {
    expect(parseVersion(text)).toBeUndefined();
  });
});

describe('compareVersions', () => {
  it.each([
    ['15.10', '15.9', 1],
    ['15.9', '15.10', -1],
    ['15', '15.0.0', 0],
    ['26.0 (25A354)', '26.0', 0],
    ['15.1-beta', '15.1', 0],
    ['14.7.1', '14.7', 1],
    ['26.1', '26.0.9', 1],
    ['015.01', '15.1', 0],
    ['9007199254740993', '9007199254740992', 1],
    ['1.9007199254740993', '1.9007199254740992', 1],
  ])('compares %s with %s as %i', (a, b, expected) => {
    expect(cmp(a, b)).toBe(expected);
  });

  it('takes version text directly, the same as parsed versions', () => {
    expect(compareVersions('15.10', '15.9')).toBe(1);
    expect(compareVersions('15', '15.0.0')).toBe(0);
    expect(compareVersions(parseVersion('26.0 (25A354)')!, '26.1')).toBe(-1);
  });

  it('sorts text without a version before every version, and equal to other such text', () => {
    expect(compareVersions('beta', '0')).toBe(-1);
    expect(compareVersions('0', '')).toBe(1);
    expect(compareVersions('beta', 'macOS')).toBe(0);
  });

  it('is reflexive', () => {
    fc.assert(fc.property(version, (v) => compareVersions(v, v) === 0));
  });

  it('is antisymmetric', () => {
    fc.assert(fc.property(version, version, (a, b) => compareVersions(a, b) === -compareVersions(b, a)));
  });

  it('is transitive', () => {
    fc.assert(
      fc.property(version, version, version, (a, b, c) => {
        // Whenever a ≤ b and b ≤ c, a ≤ c; likewise for strict and equal orderings.
        const ab = compareVersions(a, b);
        const bc = compareVersions(b, c);
        const ac = compareVersions(a, c);
        if (ab <= 0 && bc <= 0 && ac > 0) return false;
        if (ab === 0 && bc === 0 && ac !== 0) return false;
        if (ab < 0 && bc < 0 && ac >= 0) return false;
        return true;
      }),
    );
  });

  it('treats padding with .0 components as equality', () => {
    fc.assert(fc.property(version, fc.integer({ min: 1, max: 4 }), (v, zeros) => compareVersions(v, [...v, ...Array<string>(zeros).fill('0')]) === 0));
  });

  it('ignores any suffix after the numeric part', () => {
    fc.assert(
      fc.property(version, fc.string().filter((s) => !/^[.\d]/.test(s)), (v, suffix) => {
        const text = v.join('.');
        return cmp(`${text}${suffix}`, text) === 0;
      }),
    );
  });

  it('orders like BigInt for single huge components (never through Number)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 40n }), fc.bigInt({ min: 0n, max: 10n ** 40n }), (a, b) => {
        const expected = a === b ? 0 : a < b ? -1 : 1;
        return cmp(String(a), String(b)) === expected;
      }),
    );
  });
});

describe('isLatest', () => {
  const reference = '26.1';
  it.each([
    ['26.1', true],
    ['26.1.0', true],
    ['26.1 (25B78)', true],
    ['26.2', true],
    ['27', true],
    ['26.0 (25A354)', false],
    ['26', false],
    ['15.10', false],
    ['', false],
    ['unknown', false],
  ])('decides %j against 26.1 as %s', (version, expected) => {
    expect(isLatest(version, reference)).toBe(expected);
    expect(isLatest(version, parseVersion(reference)!)).toBe(expected);
  });

  it('is false for a device without a version', () => {
    expect(isLatest(undefined, reference)).toBe(false);
  });

  it('is false for every device when the reference does not parse', () => {
    expect(isLatest('99.0', 'latest')).toBe(false);
  });

  it('treats 15.10 as newer than a 15.9 reference', () => {
    expect(isLatest('15.10', '15.9')).toBe(true);
    expect(isLatest('15.9', '15.10')).toBe(false);
  });
});
