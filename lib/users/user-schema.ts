import { _, type Ajv, type KeywordCxt } from 'ajv';
import { isEmailAddress, MAX_EMAIL_LENGTH, type EmailMode } from './email-address.ts';

const NAME_MAX_LENGTH = 100;

/** Custom keyword: `emailAddress: 'strict' | 'off'`. It checks the length before any pattern runs. */
const EMAIL_KEYWORD = 'emailAddress';
export const EMAIL_MESSAGE = 'must be a valid email address';

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
      email: { type: 'string', maxLength: MAX_EMAIL_LENGTH, [EMAIL_KEYWORD]: mode },
      firstName: { type: 'string', minLength: 1, maxLength: NAME_MAX_LENGTH },
      lastName: { type: 'string', minLength: 1, maxLength: NAME_MAX_LENGTH },
    },
  }) as const;

/** How generated validators (scripts/generate-validators.ts) reach the email check: a module of lib/. */
export const EMAIL_CHECK_MODULE = './email-address.ts';

/**
 * Registers the `emailAddress` keyword; its failure names the rule, not the whole regex. It emits
 * code calling `isEmailAddress`, so the keyword also works in standalone (pre-generated) validators.
 */
export const addEmailKeyword = (ajv: Ajv): Ajv =>
  ajv.addKeyword({
    keyword: EMAIL_KEYWORD,
    type: 'string',
    schemaType: 'string',
    metaSchema: { enum: ['strict', 'off'] },
    error: { message: EMAIL_MESSAGE, params: ({ schema }) => _`{mode: ${schema as string}}` },
    code: (cxt: KeywordCxt) => {
      const check = cxt.gen.scopeValue('func', { ref: isEmailAddress, code: _`require(${EMAIL_CHECK_MODULE}).isEmailAddress` });
      cxt.fail(_`!${check}(${cxt.data}, ${cxt.schema as string})`);
    },
  });
