import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { handler as credentials } from '../../../functions/credentials.ts';
import { captureStdout, type CapturedLogs } from '../../support/capture-logs.ts';
import { httpEvent, lambdaContext } from '../../support/http-events.ts';
import { startDynalite, type Dynalite } from '../../../scripts/local/dynalite.ts';
import { createUserTables, loadUserHandlers, localDynamoEnv, type UserHandlers } from '../../support/load-handlers.ts';

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json' };
const VALUE_MESSAGE = 'must be well-formed Unicode (no lone surrogates)';
const KEY_MESSAGE = 'property name must be well-formed Unicode (no lone surrogates)';
const CONTROL_MESSAGE = 'must not contain control characters';

// JSON.stringify writes a lone surrogate as a `\udXXX` escape: exactly what a client can send.
const HIGH = '\ud83d';
const LOW = '\ude00';
const LONE = [
  ['a lone high surrogate', `a${HIGH}b`],
  ['a lone low surrogate', `a${LOW}b`],
  ['a high surrogate at the end', `ab${HIGH}`],
  ['a reversed pair', `${LOW}${HIGH}`],
] as const;

type Result = Awaited<ReturnType<typeof credentials>>;
const errorOf = (result: Result) =>
  JSON.parse(result.body!).error as { message: string; status: number; details?: { path: string; message: string }[] };

describe('strings in JSON bodies must be well-formed Unicode', () => {
  let logs: CapturedLogs;
  beforeEach(() => {
    logs = captureStdout();
  });
  afterEach(() => {
    logs.restore();
  });

  describe('POST /credentials', () => {
    const post = (body: unknown) =>
      credentials(httpEvent('POST', '/credentials', { body: JSON.stringify(body), headers: JSON_HEADERS }), lambdaContext());

    it.each(LONE.flatMap(([label, text]) => (['client_id', 'client_secret'] as const).map((field) => [label, field, text] as const)))(
      'answers %s in %s with 422 naming the field',
      async (_label, field, text) => {
        const result = await post({ client_id: 'id', client_secret: 'secret', [field]: text });
        expect(result.statusCode).toBe(422);
        expect(errorOf(result)).toMatchObject({
          message: 'Request validation failed: Parameter (credentials) failed schema validation',
          details: [{ path: `/${field}`, message: VALUE_MESSAGE }],
        });
      },
    );

    it('names a property whose name holds a lone surrogate (with U+FFFD in its place), next to the schema failure it also is', async () => {
      const result = await post({ client_id: 'id', client_secret: 'secret', [`x${HIGH}`]: 'y' });
      expect(result.statusCode).toBe(422);
      expect(errorOf(result).details).toEqual([
        { path: '/x\ufffd', message: KEY_MESSAGE },
        { path: '/x\ufffd', message: 'must NOT have additional properties' },
      ]);
      expect(result.body!.isWellFormed()).toBe(true);
      expect(result.body).not.toMatch(/\\ud83d/i);
    });

    it('finds a lone surrogate nested in arrays and objects, and reports it with every other failure of the body', async () => {
      const result = await post({ client_id: 7, extra: { list: ['fine', `x${LOW}`], [`a/b~${LOW}`]: true } });
      expect(result.statusCode).toBe(422);
      expect(errorOf(result).details).toEqual([
        { path: '/extra/list/1', message: VALUE_MESSAGE },
        { path: '/extra/a~1b~0\ufffd', message: KEY_MESSAGE },
        { path: '/client_secret', message: "must have required property 'client_secret'" },
        { path: '/extra', message: 'must NOT have additional properties' },
        { path: '/client_id', message: 'must be string' },
      ]);
    });

    it('refuses a body that is a single ill-formed string', async () => {
      const result = await post(`${HIGH}`);
      expect(errorOf(result).details).toEqual([
        { path: '/', message: VALUE_MESSAGE },
        { path: '/', message: 'must be object' },
      ]);
    });

    it('echoes astral characters (emoji) and surrogate pairs written as escapes', async () => {
      const escaped = String.raw`{"client_id":"\ud83d\udd11 key","client_secret":"s3cr3t 🚀"}`;
      const result = await credentials(httpEvent('POST', '/credentials', { body: escaped, headers: JSON_HEADERS }), lambdaContext());
      expect(result.statusCode).toBe(200);
      expect(JSON.parse(result.body!)).toEqual({ client_id: '🔑 key', client_secret: 's3cr3t 🚀' });
    });

    it('never echoes the secret while naming it', async () => {
      const result = await post({ client_id: 'id', client_secret: `hunter2${HIGH}` });
      expect(result.body).not.toContain('hunter2');
      expect(logs.raw()).not.toContain('hunter2');
    });
  });

  describe('POST /api/users (against dynalite)', () => {
    let dynalite: Dynalite;
    let handlers: UserHandlers;
    const post = (body: unknown) =>
      handlers.createUser(httpEvent('POST', '/api/users', { body: JSON.stringify(body), headers: JSON_HEADERS }), lambdaContext());
    const VALID = { email: 'jane.doe@example.com', firstName: 'Jane', lastName: 'Doe' };

    beforeAll(async () => {
      dynalite = await startDynalite();
    });
    afterAll(async () => {
      await dynalite.stop();
    });
    beforeEach(async () => {
      handlers = await loadUserHandlers({
        ...localDynamoEnv(dynalite.endpoint),
        ...(await createUserTables(dynalite.endpoint)),
        USER_EMAIL_PATTERN: undefined,
      });
    });
    afterEach(() => {
      handlers.restore();
    });

    it.each(
      LONE.flatMap(([label, text]) =>
        [
          ['email', 'email', `jane${text}@example.com`],
          ['firstName', 'firstName', text],
          ['lastName', 'lastName', text],
          ['first_name', 'firstName', text],
          ['last_name', 'lastName', text],
        ].map(([sent, named, value]) => [label, sent!, named!, value!] as const),
      ),
    )('answers %s in %s with 422 naming /%s', async (_label, sent, named, value) => {
      const body: Record<string, string> = { ...VALID };
      if (sent !== named) delete body[named];
      body[sent] = value;
      const result = await post(body);
      expect(result.statusCode).toBe(422);
      const error = errorOf(result);
      expect(error.message).toBe('Request validation failed: Parameter (user) failed schema validation');
      expect(error.details?.[0]).toEqual({ path: `/${named}`, message: VALUE_MESSAGE });
    });

    it('names an unknown property whose name holds a lone surrogate, and the fields missing from the same body', async () => {
      const result = await post({ email: VALID.email, [`nick${LOW}`]: 'jd' });
      expect(errorOf(result).details).toEqual([
        { path: '/nick\ufffd', message: KEY_MESSAGE },
        { path: '/firstName', message: "must have required property 'firstName'" },
        { path: '/lastName', message: "must have required property 'lastName'" },
        { path: '/nick\ufffd', message: 'must NOT have additional properties' },
      ]);
    });

    it('names a lone surrogate and a conflicting alias of the same body together, in a well-formed answer', async () => {
      const result = await post({ email: `jane${HIGH}@example.com`, firstName: 'A', first_name: 'B', lastName: 'Doe', [`n${LOW}`]: 'x' });
      expect(result.statusCode).toBe(422);
      expect(result.body!.isWellFormed()).toBe(true);
      const paths = errorOf(result).details!.map((detail) => detail.path);
      expect(paths).toContain('/email');
      expect(paths).toContain('/n\ufffd');
      expect(errorOf(result).details!.some((detail) => /first_?name/i.test(detail.path) && detail.message !== VALUE_MESSAGE)).toBe(true);
      expect(paths.every((path) => path.isWellFormed())).toBe(true);
    });

    it('creates a user whose names hold emoji, counting each as one character', async () => {
      const result = await post({ email: 'emoji@example.com', firstName: '😀'.repeat(100), last_name: 'Zoë 🌍' });
      expect(result.statusCode).toBe(201);
      expect(JSON.parse(result.body!)).toMatchObject({ firstName: '😀'.repeat(100), lastName: 'Zoë 🌍' });
      expect((await post({ email: 'emoji2@example.com', firstName: '😀'.repeat(101), lastName: 'B' })).statusCode).toBe(422);
    });

    it.each([
      ['NUL in firstName', { ...VALID, firstName: 'Ja\u0000ne' }, '/firstName'],
      ['a line feed in last_name', { email: VALID.email, firstName: 'Jane', last_name: 'Doe\n' }, '/lastName'],
      ['DEL in lastName', { ...VALID, lastName: 'Do\u007fe' }, '/lastName'],
      ['a C1 control in firstName', { ...VALID, firstName: 'Jos\u0081e' }, '/firstName'],
      ['U+2028 in lastName', { ...VALID, lastName: 'Doe\u2028' }, '/lastName'],
      ['NUL in a quoted email', { ...VALID, email: '"jane\u0000"@example.com' }, '/email'],
      ['a tab in the email', { ...VALID, email: 'jane\t@example.com' }, '/email'],
    ])('refuses %s with 422 and a detail', async (_label, body, path) => {
      const result = await post(body);
      expect(result.statusCode).toBe(422);
      expect(errorOf(result).details).toContainEqual({ path, message: CONTROL_MESSAGE });
    });
  });
});
