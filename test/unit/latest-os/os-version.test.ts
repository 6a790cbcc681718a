import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  compareVersions,
  formatVersion,
  isAtLeast,
  majorOf,
  parseVersion,
  responseLevel,
  type Version,
} from '../../../lib/latest-os/os-version.ts';

const component = fc.oneof(fc.nat({ max: 30 }).map(String), fc.bigInt({ min: 0n, max: 10n ** 30n }).map(String));
const version: fc.Arbitrary<Version> = fc.record({
  numbers: fc.array(component, { minLength: 1, maxLength: 5 }),
  response: fc.option(fc.constantFrom('a', 'b', 'c', 'z'), { nil: undefined }),
});

describe('parseVersion', () => {
  it.each([
    ['15.10', ['15', '10'], undefined],
    ['26.0 (25A354)', ['26', '0'], undefined],
    ['26.6 (25G72)', ['26', '6'], undefined],
    ['15.1-beta', ['15', '1'], undefined],
    ['14.7.1', ['14', '7', '1'], undefined],
    ['  15 ', ['15'], undefined],
    ['15.', ['15'], undefined],
    ['26.3.1 (a)', ['26', '3', '1'], 'a'],
    ['13.4.1 (c) (22F770820d)', ['13', '4', '1'], 'c'],
    ['26.3.1(a)', ['26', '3', '1'], 'a'],
    ['26.3.1 (A)', ['26', '3', '1'], undefined],
    ['26.3.1 (ab)', ['26', '3', '1'], undefined],
    ['26.3.1 (a),', ['26', '3', '1'], 'a'],
    ['26.3.1 (a).', ['26', '3', '1'], 'a'],
    ['26.3.1 (a)b', ['26', '3', '1'], undefined],
  ])('reads %j as its numbers and response level', (text, numbers, response) => {
    expect(parseVersion(text)).toEqual({ numbers, response });
  });

  it("takes the level from the device's own rapidSecurityResponse field when the text has none", () => {
    expect(parseVersion('26.3.1', '(a)')).toEqual({ numbers: ['26', '3', '1'], response: 'a' });
    expect(parseVersion('26.3.1', 'b')).toEqual({ numbers: ['26', '3', '1'], response: 'b' });
    expect(parseVersion('26.3.1', 'garbage')).toEqual({ numbers: ['26', '3', '1'], response: undefined });
    expect(parseVersion('26.3.1 (c)', '(a)')).toEqual({ numbers: ['26', '3', '1'], response: 'c' });
  });

  it.each(['', 'macOS 15', 'beta', '.15', '-1'])('finds no version in %j', (text) => {
    expect(parseVersion(text)).toBeUndefined();
  });

  it.each([
    ['(a)', 'a'],
    [' (c) ', 'c'],
    ['a', 'a'],
    [null, undefined],
    ['', undefined],
    ['(A)', undefined],
    ['(ab)', undefined],
    ['a)', undefined],
    ['(a', undefined],
  ] as const)('reads the response field %j as %j', (field, expected) => {
    expect(responseLevel(field ?? undefined)).toBe(expected);
  });
});

describe('compareVersions', () => {
  /** Compares version text as the service reads it. */
  const compareText = (a: string, b: string) => compareVersions(parseVersion(a), parseVersion(b));

  it.each([
    ['15.10', '15.9', 1],
    ['15.9', '15.10', -1],
    ['15', '15.0.0', 0],
    ['15.2.0', '15.2', 0],
    ['26.0 (25A354)', '26.0', 0],
    ['15.1-beta', '15.1', 0],
    ['14.7.1', '14.7', 1],
    ['26.1', '26.0.9', 1],
    ['015.01', '15.1', 0],
    ['9007199254740993', '9007199254740992', 1],
    ['1.9007199254740993', '1.9007199254740992', 1],
    ['26.3.1 (a)', '26.3.1', 1],
    ['26.3.1 (c)', '26.3.1 (a)', 1],
    ['26.3.2', '26.3.1 (c)', 1],
    ['26.3.1.0 (a)', '26.3.1 (a)', 0],
    ['26.3 (a)', '26.3.0.1', -1],
  ])('compares %s with %s as %i', (a, b, expected) => {
    expect(compareText(a, b)).toBe(expected);
  });

  it('orders 26.3.1 < 26.3.1 (a) < 26.3.1 (c) < 26.3.2', () => {
    const ordered = ['26.3.2', '26.3.1 (c)', '26.3.1', '26.3.1 (a)'].sort(compareText);
    expect(ordered).toEqual(['26.3.1', '26.3.1 (a)', '26.3.1 (c)', '26.3.2']);
  });

  it('sorts text without a version before every version, and equal to other such text', () => {
    expect(compareText('beta', '0')).toBe(-1);
    expect(compareText('0', '')).toBe(1);
    expect(compareText('beta', 'macOS')).toBe(0);
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
        const ab = compareVersions(a, b);
        const bc = compareVersions(b, c);
        const ac = compareVersions(a, c);
        return !(ab <= 0 && bc <= 0) || ac <= 0;
      }),
    );
  });

  it('is total: any list sorts to one order, whatever order it came in', () => {
    fc.assert(
      fc.property(fc.array(version, { maxLength: 12 }), fc.nat(), (versions, seed) => {
        const shuffled = [...versions].sort(
          (a, b) => ((JSON.stringify(a).length * 31 + seed) % 7) - ((JSON.stringify(b).length * 31 + seed) % 7),
        );
        const one = [...versions].sort(compareVersions).map(formatVersion);
        const other = shuffled.sort(compareVersions).map(formatVersion);
        return one.every((text, index) => compareText(text, other[index]!) === 0);
      }),
    );
  });

  it('treats padding with .0 components as equality, response level kept', () => {
    fc.assert(
      fc.property(
        version,
        fc.integer({ min: 1, max: 4 }),
        (v, zeros) => compareVersions(v, { ...v, numbers: [...v.numbers, ...Array<string>(zeros).fill('0')] }) === 0,
      ),
    );
  });

  it('ranks a response level above its bare version and below the next version', () => {
    fc.assert(
      fc.property(version, fc.constantFrom('a', 'c', 'z'), (v, letter) => {
        const bare = { numbers: v.numbers, response: undefined };
        const next = { numbers: [...v.numbers.slice(0, -1), String(BigInt(v.numbers.at(-1)!) + 1n)], response: undefined };
        const withLevel = { numbers: v.numbers, response: letter };
        return compareVersions(bare, withLevel) === -1 && compareVersions(withLevel, next) === -1;
      }),
    );
  });
});

describe('isAtLeast (the latest-OS decision against one version)', () => {
  const at = (device: string, reference: string) => isAtLeast(parseVersion(device), parseVersion(reference));

  it.each([
    ['26.1', '26.1', true],
    ['26.1.1', '26.1', true],
    ['26.0.9', '26.1', false],
    ['15.10', '15.9', true],
    ['26.3.1', '26.3.1 (a)', false],
    ['26.3.1 (a)', '26.3.1 (a)', true],
    ['26.3.1 (c)', '26.3.1 (a)', true],
    ['26.3.2', '26.3.1 (c)', true],
    ['26.3.1 (a)', '26.3.1', true],
  ])('%s against %s: %s', (device, reference, expected) => {
    expect(at(device, reference)).toBe(expected);
  });

  it('is false for a device without a version, and for every device against an unparsable reference', () => {
    expect(isAtLeast(undefined, parseVersion('26.1'))).toBe(false);
    expect(isAtLeast(parseVersion('99.0'), parseVersion('latest'))).toBe(false);
  });
});

describe('majorOf', () => {
  it.each([
    ['26.6.2', '26'],
    ['15.7.9', '15'],
    ['026.1', '26'],
    ['10.15.7', '10.15'],
    ['10.9.5', '10.9'],
  ])('places %s in major %s', (text, major) => {
    expect(majorOf(parseVersion(text)!)).toBe(major);
  });
});
