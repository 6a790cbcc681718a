import type { ValidateFunction } from 'ajv';
import { ValidationError } from '../errors.ts';
import type { BodySpec } from '../http/json-body.ts';
import { toErrorDetails } from '../http/error-envelope.ts';
import { illFormedStrings } from '../http/well-formed-strings.ts';
import type { EmailMode } from './email-address.ts';
import { foldUserAliases } from './user-aliases.ts';
import { validate as validateOff } from './user-off.generated.ts';
import { validate as validateStrict } from './user-strict.generated.ts';

const USER_PARAMETER = 'user';

/** The `user` schema of each email mode, generated ahead of time from user-schema.ts. */
const VALIDATORS: Record<EmailMode, ValidateFunction> = { strict: validateStrict, off: validateOff };

/**
 * The POST /api/users body spec for the HTTP chain. The email mode comes from configuration, which
 * may be invalid, so `mode()` is asked per request rather than when the spec is built (a ConfigError
 * thrown by `mode()` becomes the chain's generic 500).
 */
export const makeUserBodySpec = (mode: () => EmailMode): BodySpec => {
  const validate = ((event: unknown) => {
    const selected = VALIDATORS[mode()];
    const valid = selected(event);
    validate.errors = selected.errors;
    return valid;
  }) as ValidateFunction;

  const normalize = (body: unknown): unknown => {
    const folded = foldUserAliases(body);
    if (folded.conflicts.length === 0) return folded.body;
    // Report the conflicts together with every other failure of the same body: its lone surrogates
    // (named as sent: the aliases did not fold) and the schema's. Paths stay well-formed text.
    const others = validate({ body: folded.body }) ? [] : toErrorDetails(validate.errors);
    const details = [...illFormedStrings(body), ...folded.conflicts, ...others];
    throw new ValidationError(
      USER_PARAMETER,
      details.map((detail) => ({ ...detail, path: detail.path.toWellFormed() })),
    );
  };

  return { parameterName: USER_PARAMETER, validate, normalize };
};

/**
 * Two parsed bodies are one request for an Idempotency-Key when they fold to the same user:
 * `first_name` or `firstName` with the same value, keys in any order, are the same create
 * (docs/api.md#safe-retries). A body whose aliases contradict their twins is only the same as itself.
 */
export const canonicalUserBody = (body: unknown): unknown => {
  const folded = foldUserAliases(body);
  return folded.conflicts.length === 0 ? folded.body : body;
};
