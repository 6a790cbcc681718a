import type { ValidateFunction } from 'ajv';
import { ValidationError, type ErrorDetail } from '../errors.ts';
import { toErrorDetails } from './error-envelope.ts';
import type { HttpEvent, HttpMiddleware } from './http-types.ts';

export interface QuerySpec {
  /** The name in the 422 message: `Parameter (<name>) failed schema validation`. */
  parameterName: string;
  /** A validator of the typed query object (generated ahead of time, like the body validators). */
  validate: ValidateFunction;
  /** Types the parameters' text for the schema (numbers, booleans); text it cannot type stays text. */
  type: (parameters: Readonly<Record<string, string>>) => Record<string, unknown>;
}

/**
 * Reads the query from the raw query string (API Gateway's `queryStringParameters` joins a repeated
 * parameter's values with commas, which would hide the repetition), types and validates it, and
 * leaves the result as `queryStringParameters` for the handler. `specOf` gives the rules of the
 * request's route (none: its query is not read). A repeated parameter, an unknown one
 * or a malformed value is a 422 whose details name each parameter.
 */
export const queryParameters = (specOf: (event: HttpEvent) => QuerySpec | undefined): HttpMiddleware => ({
  before: (request) => {
    const spec = specOf(request.event);
    if (spec === undefined) return;
    const values = new Map<string, string>();
    const repeated = new Set<string>();
    for (const [name, value] of new URLSearchParams(request.event.rawQueryString ?? '')) {
      if (values.has(name)) repeated.add(name);
      else values.set(name, value);
    }
    for (const name of repeated) values.delete(name);
    const typed = spec.type(Object.fromEntries(values));
    const details: ErrorDetail[] = [...repeated].map((name) => ({ path: `/${name}`, message: 'must appear at most once' }));
    if (!spec.validate(typed)) details.push(...toErrorDetails(spec.validate.errors));
    if (details.length > 0) throw new ValidationError(spec.parameterName, details);
    request.event.queryStringParameters = typed as never;
  },
});
