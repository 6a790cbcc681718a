import { BadRequestError, UnsupportedMediaTypeError, ValidationError } from '../errors.ts';
import { toErrorDetails } from './error-envelope.ts';
import type { HttpEvent, HttpMiddleware } from './http-types.ts';
import { bodyText } from './json-body-limits.ts';

const PARSER = '@middy/http-json-body-parser';
const VALIDATOR = '@middy/validator';
/** The keys the parser's prototype guard refuses, as it reports them in its error's `cause.data`. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor']);

/** A Middy HTTP error (`createError`): its status and the package that raised it. */
const middyError = (error: unknown): { status: number; package: unknown; data: unknown } | undefined => {
  const { statusCode, cause } = (error ?? {}) as { statusCode?: unknown; cause?: { package?: unknown; data?: unknown } };
  return typeof statusCode === 'number' && cause !== undefined
    ? { status: statusCode, package: cause.package, data: cause.data }
    : undefined;
};

/**
 * Whether a body the parser refused for its content type, and so never read, is JSON text. It is
 * parsed here once, and only here: json-body-limits has already refused one above the size limit.
 */
const isJsonText = (event: HttpEvent): boolean => {
  if (typeof event.body !== 'string') return false;
  try {
    JSON.parse(bodyText(event));
    return true;
  } catch {
    return false;
  }
};

/**
 * Turns the body parser's errors into the project's own, recognised by the package that raised them
 * and their status, never their wording (the main chain, around the parser):
 * - its 415 (a content type that is not JSON, or none): a 415 only for a body that is JSON; any
 *   other body, no body included, is a 400 whatever its label, since the body itself is wrong;
 * - its 422: a `__proto__` or `constructor.prototype` key (json-body-limits has already refused
 *   JSON-typed text that is not JSON).
 */
export const parserErrors = (parameterName: string): HttpMiddleware => ({
  onError: (request) => {
    const error = middyError(request.error);
    if (error?.package === PARSER && error.status === 415) {
      request.error = isJsonText(request.event) ? new UnsupportedMediaTypeError() : new BadRequestError(undefined, request.error);
    } else if (error?.package === PARSER && error.status === 422) {
      request.error = FORBIDDEN_KEYS.has(String(error.data))
        ? new ValidationError(parameterName, [{ path: `/${String(error.data)}`, message: 'must NOT have additional properties' }])
        : new BadRequestError(undefined, request.error);
    }
  },
});

/**
 * Turns the validator's 400 (the schema failed) into a 422 naming `parameterName`, a detail per
 * failure (the request's rules, around the validator, so safe retries keep the 422 as an outcome).
 */
export const validatorErrors = (parameterName: string): HttpMiddleware => ({
  onError: (request) => {
    const error = middyError(request.error);
    if (error?.package === VALIDATOR && error.status === 400) {
      request.error = new ValidationError(parameterName, toErrorDetails(error.data as never));
    }
  },
});
