import type { Ajv, FuncKeywordDefinition, ValidateFunction } from 'ajv';
import { compileBodyValidator, makeAjv } from '../http/validation.ts';
import { isEmailAddress, MAX_EMAIL_LENGTH, type EmailMode } from './email-address.ts';

export const NAME_MAX_LENGTH = 100;

/** Custom keyword: `emailAddress: 'strict' | 'off'`. It checks the length before any pattern runs. */
export const EMAIL_KEYWORD = 'emailAddress';
export const EMAIL_MESSAGE = 'must be a valid email address';

type KeywordValidate = ReturnType<NonNullable<FuncKeywordDefinition['compile']>>;

/**
 * The `user` body schema (CONTRACT §3). The email rule is a keyword rather than `pattern` because AJV
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

/** Registers the `emailAddress` keyword; its failure names the rule, not the whole regex. */
export const addEmailKeyword = (ajv: Ajv): Ajv =>
  ajv.addKeyword({
    keyword: EMAIL_KEYWORD,
    type: 'string',
    schemaType: 'string',
    metaSchema: { enum: ['strict', 'off'] },
    errors: true,
    compile: (mode: EmailMode) => {
      const validate: KeywordValidate = (data: string) => {
        if (isEmailAddress(data, mode)) return true;
        validate.errors = [{ keyword: EMAIL_KEYWORD, message: EMAIL_MESSAGE, params: { mode } }];
        return false;
      };
      return validate;
    },
  });

/** A validator of the HTTP event's `{ body }` for the given email mode (see `compileBodyValidator`). */
export const compileUserValidator = (mode: EmailMode): ValidateFunction =>
  compileBodyValidator(addEmailKeyword(makeAjv()), userSchema(mode));
