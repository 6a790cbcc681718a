import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { MAX_EMAIL_LENGTH, meetsEmailRule } from '../../../lib/users/email-address.ts';

// Copied from docs/api.md so a drift between the documented pattern and the code's copy fails here.
const DOCUMENTED_PATTERN =
  '^(([^<>()\\[\\]\\\\.,;:\\s@"]+(\\.[^<>()\\[\\]\\\\.,;:\\s@"]+)*)|(".+"))@((\\[[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}\\])|(([a-zA-Z\\-0-9]+\\.)+[a-zA-Z]{2,}))$';

/** Each regular expression `run` tests a string against, as [source, flags] (run should only call meetsEmailRule). */
const patternsRun = (run: () => void): [string, string][] => {
  const test = vi.spyOn(RegExp.prototype, 'test');
  try {
    run();
    return (test.mock.contexts as RegExp[]).map((pattern) => [pattern.source, pattern.flags]);
  } finally {
    test.mockRestore();
  }
};

const ADVERSARIAL = [
  ['dotted runs', 'a.'.repeat(20_000)],
  ['an unterminated quoted local part', `"${'a'.repeat(50_000)}`],
  ['a dashed domain without a dot', `a@${'a-'.repeat(30_000)}`],
  ['repeated quoted segments', `"${'"@a.aa'.repeat(10_000)}`],
  ['a long run of labels ending badly', `a@${'aa.'.repeat(20_000)}-`],
] as const;

describe('meetsEmailRule: the address rule, within 254 characters', () => {
  it('uses the documented pattern character for character, without the u flag', () => {
    expect(patternsRun(() => meetsEmailRule('jdoe@example.com', 'strict'))).toEqual([[DOCUMENTED_PATTERN, '']]);
  });

  it.each([
    'jdoe@example.com',
    'Jane.Doe@Example.COM',
    'first.middle.last@sub.example.co.uk',
    '"john doe"@example.com',
    '"john@doe"@example.com',
    'jdoe@[192.168.0.1]',
    'j+tag@ex-ample.io',
  ])('accepts %s under the strict pattern', (email) => {
    expect(meetsEmailRule(email, 'strict')).toBe(true);
  });

  it.each([
    ['a single-label domain', 'jdoe@intranet'],
    ['no @', 'jdoe.example.com'],
    ['an empty local part', '@example.com'],
    ['an empty domain', 'jdoe@'],
    ['a space in the local part', 'j doe@example.com'],
    ['two dots in a row', 'j..doe@example.com'],
    ['a leading dot', '.jdoe@example.com'],
    ['a one-letter top-level domain', 'jdoe@example.c'],
    ['a numeric top-level domain', 'jdoe@example.123'],
    ['two @', 'j@doe@example.com'],
    ['an IPv4 literal without brackets', 'jdoe@192.168.0.1'],
    ['the empty string', ''],
  ])('refuses %s under the strict pattern', (_label, email) => {
    expect(meetsEmailRule(email, 'strict')).toBe(false);
  });

  it.each(['jdoe@intranet', 'jdoe@example.com', 'j doe@local host', 'x@y', '"john@doe"@intranet'])(
    'accepts %s with the pattern off',
    (email) => {
      expect(meetsEmailRule(email, 'off')).toBe(true);
    },
  );

  it.each([
    ['no @', 'jdoe'],
    ['nothing before the @', '@intranet'],
    ['nothing after the @', 'jdoe@'],
    ['only blanks before the @', '   @intranet'],
    ['only blanks after the @', 'jdoe@  '],
    ['an @ at the very end after another', 'a@b@'],
    ['the empty string', ''],
    ['a trailing blank', 'jdoe@intranet '],
    ['a leading blank', ' JDOE@intranet'],
    ['a trailing newline', 'jdoe@intranet\n'],
  ])('refuses %s with the pattern off', (_label, email) => {
    expect(meetsEmailRule(email, 'off')).toBe(false);
  });

  it('admits with the pattern off every address the strict pattern admits', () => {
    const local = fc.oneof(
      fc.stringMatching(/^[a-z0-9!#$%&'*+/=?^_`{|}~-]{1,20}(\.[a-z0-9_-]{1,10}){0,3}$/),
      fc.string({ minLength: 1, maxLength: 20 }).map((text) => `"${text}"`),
    );
    const domain = fc.oneof(
      fc.stringMatching(/^([a-z0-9-]{1,15}\.){1,3}[a-z]{2,6}$/),
      fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((parts) => `[${parts.join('.')}]`),
    );
    // Counted, so that the implication is seen to hold on many addresses and not vacuously.
    let admitted = 0;
    const offAdmitsWhatStrictAdmits = (email: string): void => {
      if (!meetsEmailRule(email, 'strict')) return;
      admitted += 1;
      expect(meetsEmailRule(email, 'off')).toBe(true);
    };
    fc.assert(
      fc.property(local, domain, (localPart, domainPart) => offAdmitsWhatStrictAdmits(`${localPart}@${domainPart}`)),
      { numRuns: 500 },
    );
    expect(admitted).toBeGreaterThan(250);
    // Any text (white space, controls, astral characters) as the local part, bare or quoted.
    admitted = 0;
    const anyText = fc.string({ maxLength: 40, unit: 'binary' });
    fc.assert(
      fc.property(
        fc.oneof(
          anyText,
          fc.tuple(anyText, domain).map(([text, domainPart]) => `${text}@${domainPart}`),
          fc.tuple(anyText, domain).map(([text, domainPart]) => `"${text}"@${domainPart}`),
        ),
        offAdmitsWhatStrictAdmits,
      ),
      { numRuns: 1000 },
    );
    expect(admitted).toBeGreaterThan(100);
  });

  it('accepts exactly 254 characters in both modes (one more is left to maxLength, below)', () => {
    const at254 = `${'a'.repeat(MAX_EMAIL_LENGTH - '@example.com'.length)}@example.com`;
    expect(at254).toHaveLength(254);
    expect(meetsEmailRule(at254, 'strict')).toBe(true);
    expect(meetsEmailRule(at254, 'off')).toBe(true);
  });

  it('counts characters, not UTF-16 units: a character outside the BMP counts once', () => {
    const emoji = `${'a'.repeat(100)}${'😀'.repeat(100)}@example.com`;
    expect([...emoji]).toHaveLength(212);
    expect(meetsEmailRule(emoji, 'strict')).toBe(true);
    expect(meetsEmailRule(emoji, 'off')).toBe(true);
    const at254 = `${'😀'.repeat(MAX_EMAIL_LENGTH - '@example.com'.length)}@example.com`;
    expect([...at254]).toHaveLength(254);
    expect(meetsEmailRule(at254, 'strict')).toBe(true);
    expect(meetsEmailRule(at254, 'off')).toBe(true);
  });

  it('runs the pattern on inputs within the cap', () => {
    let meets: boolean | undefined;
    expect(patternsRun(() => (meets = meetsEmailRule('a.'.repeat(100), 'strict')))).toEqual([[DOCUMENTED_PATTERN, '']]);
    expect(meets).toBe(false);
  });
});

describe('meetsEmailRule beside maxLength', () => {
  it('leaves an address over 254 characters to maxLength, without running the pattern on it', () => {
    const emails = [`${'a'.repeat(243)}@example.com`, `${'😀'.repeat(243)}@example.com`, ...ADVERSARIAL.map(([, text]) => text)];
    const outcomes: boolean[] = [];
    const patterns = patternsRun(() => {
      for (const email of emails) outcomes.push(meetsEmailRule(email, 'strict'), meetsEmailRule(email, 'off'));
    });
    expect(outcomes).toEqual(emails.flatMap(() => [true, true]));
    expect(patterns).toEqual([]);
  });
});
