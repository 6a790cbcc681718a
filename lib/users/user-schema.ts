import { _, type Ajv, type KeywordCxt } from 'ajv';
import { MAX_EMAIL_LENGTH, meetsEmailRule, type EmailMode } from './email-address.ts';
import { isPlainText } from './plain-text.ts';

const NAME_MAX_LENGTH = 100;

/** Custom keyword: `plainText: true` refuses control characters (see plain-text.ts). */
const PLAIN_TEXT_KEYWORD = 'plainText';
const PLAIN_TEXT_MESSAGE = 'must not contain control characters';

/** Custom keyword: `emailAddress: 'strict' | 'off'`. It checks the length before any pattern runs. */
const EMAIL_KEYWORD = 'emailAddress';
const EMAIL_MESSAGE = 'must be a valid email address';

/**
 * The `user` body schema (docs/api.md). The email rule is a keyword rather than `pattern` because AJV
 * with `allErrors` evaluates `pattern` even after `maxLength` failed, which would hand a backtracking
 * regex an unbounded input.
 */
export const userSchema = (mode: EmailMode) =>
  ({
    type: 'object',
    required: ['email', 'firstName', 'lastName'],
    additionalProperties: false,
    properties: {
      email: { type: 'string', maxLength: MAX_EMAIL_LENGTH, [PLAIN_TEXT_KEYWORD]: true, [EMAIL_KEYWORD]: mode },
      firstName: { type: 'string', minLength: 1, maxLength: NAME_MAX_LENGTH, [PLAIN_TEXT_KEYWORD]: true },
      lastName: { type: 'string', minLength: 1, maxLength: NAME_MAX_LENGTH, [PLAIN_TEXT_KEYWORD]: true },
    },
  }) as const;

/** How generated validators (scripts/generate-validators.ts) reach the email check: a module of lib/. */
export const EMAIL_CHECK_MODULE = './email-address.ts';
/** How generated validators reach the control-character check. */
export const PLAIN_TEXT_CHECK_MODULE = './plain-text.ts';

/**
 * Registers the `emailAddress` keyword; its failure names the rule, not the whole regex. It emits
 * code calling `meetsEmailRule`, so the keyword also works in standalone (pre-generated) validators.
 */
const addEmailKeyword = (ajv: Ajv): Ajv =>
  ajv.addKeyword({
    keyword: EMAIL_KEYWORD,
    type: 'string',
    schemaType: 'string',
    metaSchema: { enum: ['strict', 'off'] },
    error: { message: EMAIL_MESSAGE, params: ({ schema }) => _`{mode: ${schema as string}}` },
    code: (cxt: KeywordCxt) => {
      const check = cxt.gen.scopeValue('func', { ref: meetsEmailRule, code: _`require(${EMAIL_CHECK_MODULE}).meetsEmailRule` });
      cxt.fail(_`!${check}(${cxt.data}, ${cxt.schema as string})`);
    },
  });

/**
 * Registers the `plainText` keyword: a schema rule rather than part of the email and name checks, so
 * it reports its own detail next to the others and holds whatever USER_EMAIL_PATTERN says. Like
 * `emailAddress`, it emits a call of a lib/ function, usable from standalone validators.
 */
const addPlainTextKeyword = (ajv: Ajv): Ajv =>
  ajv.addKeyword({
    keyword: PLAIN_TEXT_KEYWORD,
    type: 'string',
    schemaType: 'boolean',
    metaSchema: { const: true },
    error: { message: PLAIN_TEXT_MESSAGE },
    code: (cxt: KeywordCxt) => {
      const check = cxt.gen.scopeValue('func', { ref: isPlainText, code: _`require(${PLAIN_TEXT_CHECK_MODULE}).isPlainText` });
      cxt.fail(_`!${check}(${cxt.data})`);
    },
  });

/** Every custom keyword of the `user` schema. */
export const addUserKeywords = (ajv: Ajv): Ajv => addPlainTextKeyword(addEmailKeyword(ajv));
