import { describe, expect, it } from 'vitest';
import { AppError, ValidationError } from '../../../lib/errors.ts';
import { toErrorDetails } from '../../../lib/http/error-envelope.ts';
import type { EmailMode } from '../../../lib/users/email-address.ts';
import { makeUserBodySpec } from '../../../lib/users/user-body.ts';
import { userSchema } from '../../../lib/users/user-schema.ts';
import { validate as validateOff } from '../../../lib/users/user-off.generated.ts';
import { validate as validateStrict } from '../../../lib/users/user-strict.generated.ts';

/** The details' messages for an email the pattern refuses and for a control character, as docs/api.md quotes them. */
const EMAIL_MESSAGE = 'must be a valid email address';
const PLAIN_TEXT_MESSAGE = 'must not contain control characters';

type Outcome = { valid: true; body: unknown } | { valid: false; details: { path: string; message: string }[] };

/** Runs a parsed body through the spec the way the HTTP chain does: normalize, then validate `{ body }`. */
const check = (body: unknown, mode: EmailMode = 'strict'): Outcome => {
  const spec = makeUserBodySpec(() => mode);
  let normalized: unknown;
  try {
    normalized = spec.normalize!(body);
  } catch (error) {
    if (error instanceof ValidationError) return { valid: false, details: error.details ?? [] };
    throw error;
  }
  if (spec.validate({ body: normalized })) return { valid: true, body: normalized };
  return { valid: false, details: toErrorDetails(spec.validate.errors) };
};

const VALID = { email: 'jane.doe@example.com', firstName: 'Jane', lastName: 'Doe' };
const without = (key: keyof typeof VALID) => Object.fromEntries(Object.entries(VALID).filter(([name]) => name !== key));
const paths = (outcome: Outcome) => (outcome.valid ? [] : outcome.details.map((detail) => detail.path));

describe('user body (schema + aliases)', () => {
  it.each([
    ['a plain body', VALID],
    ['100-char names', { ...VALID, firstName: 'x'.repeat(100), lastName: 'y'.repeat(100) }],
    ['one-char names', { ...VALID, firstName: 'J', lastName: 'D' }],
    ['a quoted local part', { ...VALID, email: '"john doe"@example.com' }],
    ['a bracketed IPv4 literal', { ...VALID, email: 'jdoe@[192.168.0.1]' }],
    ['non-ASCII names', { ...VALID, firstName: 'Zoë', lastName: 'Ødegård' }],
  ])('accepts %s', (_label, body) => {
    expect(check(body)).toEqual({ valid: true, body });
  });

  it.each([
    ['email is missing', without('email'), '/email', 'must have required property'],
    ['firstName is missing', without('firstName'), '/firstName', 'must have required property'],
    ['lastName is missing', without('lastName'), '/lastName', 'must have required property'],
    ['email is a number', { ...VALID, email: 42 }, '/email', 'must be string'],
    ['email is null', { ...VALID, email: null }, '/email', 'must be string'],
    ['firstName is an array', { ...VALID, firstName: ['Jane'] }, '/firstName', 'must be string'],
    ['lastName is a boolean', { ...VALID, lastName: true }, '/lastName', 'must be string'],
    ['firstName is empty', { ...VALID, firstName: '' }, '/firstName', 'must NOT have fewer than 1 characters'],
    ['lastName is empty', { ...VALID, lastName: '' }, '/lastName', 'must NOT have fewer than 1 characters'],
    ['email is empty', { ...VALID, email: '' }, '/email', EMAIL_MESSAGE],
    ['firstName has 101 chars', { ...VALID, firstName: 'x'.repeat(101) }, '/firstName', 'must NOT have more than 100 characters'],
    ['lastName has 101 chars', { ...VALID, lastName: 'x'.repeat(101) }, '/lastName', 'must NOT have more than 100 characters'],
    ['email has 255 chars', { ...VALID, email: `${'a'.repeat(243)}@example.com` }, '/email', 'must NOT have more than 254 characters'],
    ['there is an extra property', { ...VALID, role: 'admin' }, '/role', 'must NOT have additional properties'],
    ['the email has a single-label domain', { ...VALID, email: 'jdoe@intranet' }, '/email', EMAIL_MESSAGE],
  ])('refuses a body where %s, naming the field and the rule', (_label, body, path, message) => {
    const outcome = check(body);
    expect(outcome.valid).toBe(false);
    expect(outcome.valid ? [] : outcome.details).toContainEqual({ path, message: expect.stringContaining(message) });
  });

  it.each([
    ['an array', [VALID]],
    ['a string', 'jane.doe@example.com'],
    ['null', null],
    ['a number', 7],
  ])('refuses a body that is %s', (_label, body) => {
    expect(check(body)).toEqual({ valid: false, details: [{ path: '/', message: 'must be object' }] });
  });

  it('reports every failing field at once', () => {
    expect(paths(check({ email: 'nope', firstName: '', extra: 1 }))).toEqual(
      expect.arrayContaining(['/email', '/firstName', '/lastName', '/extra']),
    );
  });

  it('never puts the regex itself into a detail', () => {
    const outcome = check({ ...VALID, email: 'jdoe@intranet' });
    expect(JSON.stringify(outcome)).not.toContain('[^<>()');
  });

  it.each(['strict', 'off'] as const)('counts an emoji in the email as one character (%s): 212 characters with 100 emoji pass', (mode) => {
    const email = `${'a'.repeat(100)}${'😀'.repeat(100)}@example.com`;
    expect(email.length).toBeGreaterThan(254);
    expect(check({ ...VALID, email }, mode)).toEqual({ valid: true, body: { ...VALID, email } });
    const at254 = `${'😀'.repeat(254 - '@example.com'.length)}@example.com`;
    expect(check({ ...VALID, email: at254 }, mode).valid).toBe(true);
  });

  it.each(['strict', 'off'] as const)('refuses an email of 255 characters (%s) with the length detail alone', (mode) => {
    for (const local of ['a'.repeat(243), '😀'.repeat(243)]) {
      expect(check({ ...VALID, email: `${local}@example.com` }, mode)).toEqual({
        valid: false,
        details: [{ path: '/email', message: 'must NOT have more than 254 characters' }],
      });
    }
  });

  it('accepts jdoe@intranet with the pattern off and still refuses an address without text around its @', () => {
    expect(check({ ...VALID, email: 'jdoe@intranet' }, 'off').valid).toBe(true);
    expect(paths(check({ ...VALID, email: 'jdoe@' }, 'off'))).toEqual(['/email']);
    expect(paths(check({ ...VALID, email: 'jdoe' }, 'off'))).toEqual(['/email']);
  });

  it('folds first_name/last_name onto firstName/lastName', () => {
    expect(check({ email: VALID.email, first_name: 'Jane', last_name: 'Doe' })).toEqual({ valid: true, body: VALID });
  });

  it('accepts an alias next to its camelCase twin when both hold the same value', () => {
    expect(check({ ...VALID, first_name: 'Jane', last_name: 'Doe' })).toEqual({ valid: true, body: VALID });
  });

  it('refuses an alias whose camelCase twin differs, with a detail naming both', () => {
    const outcome = check({ ...VALID, first_name: 'Janet' });
    expect(outcome.valid).toBe(false);
    const details = outcome.valid ? [] : outcome.details;
    expect(details).toHaveLength(1);
    expect(details[0]!.path).toBe('/firstName');
    expect(details[0]!.message).toContain('first_name');
  });

  it('reports a conflicting alias together with the other failures of the body', () => {
    expect(paths(check({ email: 'jdoe@intranet', firstName: 'Jane', first_name: 'Janet', last_name: 'Doe', last_name_x: 1 }))).toEqual(
      expect.arrayContaining(['/firstName', '/email', '/last_name_x']),
    );
  });

  it.each([
    ['a number', 7],
    ['an object', { value: 'Jane' }],
    ['null', null],
    ['an empty string', ''],
  ])('does not let an alias carry %s past the firstName rules', (_label, value) => {
    expect(paths(check({ email: VALID.email, first_name: value, lastName: 'Doe' }))).toEqual(['/firstName']);
    expect(paths(check({ email: VALID.email, firstName: 'Jane', last_name: value }))).toEqual(['/lastName']);
  });

  it('treats equal non-string twins as the type failure they are', () => {
    expect(paths(check({ email: VALID.email, firstName: 5, first_name: 5, lastName: 'Doe' }))).toEqual(['/firstName']);
  });

  it('surfaces a configuration failure from the mode lookup instead of validating', () => {
    const spec = makeUserBodySpec(() => {
      throw new AppError(500, 'Service misconfigured');
    });
    expect(() => spec.validate({ body: VALID })).toThrow(AppError);
  });
});

describe('control characters in names and emails', () => {
  const REFUSED = [
    ['NUL', '\u0000'],
    ['a tab', '\t'],
    ['a line feed', '\n'],
    ['a carriage return', '\r'],
    ['ESC', '\u001b'],
    ['U+001F', '\u001f'],
    ['DEL', '\u007f'],
    ['the C1 control U+0080', '\u0080'],
    ['NEL (U+0085)', '\u0085'],
    ['the C1 control U+009F', '\u009f'],
    ['the line separator U+2028', '\u2028'],
    ['the paragraph separator U+2029', '\u2029'],
  ] as const;

  it.each(REFUSED)('refuses %s in firstName, lastName and email, in both email modes', (_label, character) => {
    for (const mode of ['strict', 'off'] as const) {
      for (const [field, value] of [
        ['firstName', `Ja${character}ne`],
        ['lastName', `${character}Doe`],
        ['email', `jane${character}doe@example.com`],
      ] as const) {
        const outcome = check({ ...VALID, [field]: value }, mode);
        expect(outcome.valid ? [] : outcome.details, `${mode} ${field}`).toContainEqual({ path: `/${field}`, message: PLAIN_TEXT_MESSAGE });
      }
    }
  });

  it('refuses a NUL that the strict pattern alone would admit in a quoted local part, and one sent through an alias', () => {
    expect(check({ ...VALID, email: '"jane\u0000doe"@example.com' })).toEqual({
      valid: false,
      details: [{ path: '/email', message: PLAIN_TEXT_MESSAGE }],
    });
    expect(check({ email: VALID.email, first_name: 'Jane\u0000', lastName: 'Doe' })).toEqual({
      valid: false,
      details: [{ path: '/firstName', message: PLAIN_TEXT_MESSAGE }],
    });
  });

  it.each([
    ['a no-break space', 'Jean\u00a0Luc'],
    ['a zero-width non-joiner (Persian)', 'می\u200cخواهم'],
    ['a soft hyphen', 'Zoë-\u00adAnn'],
    ['an emoji', '😀'],
  ])('accepts %s in a name', (_label, firstName) => {
    expect(check({ ...VALID, firstName }).valid).toBe(true);
  });
});

describe('user validator against adversarial emails', () => {
  const ADVERSARIAL = ['a.'.repeat(20_000), `"${'a'.repeat(50_000)}`, `a@${'a-'.repeat(30_000)}`, `${'a'.repeat(100_000)}@example.com`];

  const SHIPPED = { strict: validateStrict, off: validateOff };

  it.each(['strict', 'off'] as const)('refuses tens of KB of adversarial email in %s mode', { timeout: 5_000 }, (mode) => {
    const validate = SHIPPED[mode];
    for (const email of ADVERSARIAL) {
      expect(validate({ body: { ...VALID, email } })).toBe(false);
      expect(toErrorDetails(validate.errors)).toEqual([{ path: '/email', message: 'must NOT have more than 254 characters' }]);
    }
  });

  it('builds the schema for the mode it is given', () => {
    expect(userSchema('strict').properties.email.emailAddress).toBe('strict');
    expect(userSchema('off').properties.email.emailAddress).toBe('off');
  });
});
