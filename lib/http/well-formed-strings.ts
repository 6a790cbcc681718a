import type { ValidateFunction } from 'ajv';
import { ValidationError, type ErrorDetail } from '../errors.ts';
import { isPlainObject } from '../values/plain-object.ts';
import { toErrorDetails } from './error-envelope.ts';
import type { HttpMiddleware } from './http-types.ts';

const VALUE_MESSAGE = 'must be well-formed Unicode (no lone surrogates)';
const KEY_MESSAGE = 'property name must be well-formed Unicode (no lone surrogates)';

/** A property name as one JSON Pointer segment (RFC 6901), as AJV writes the schema's paths. */
const pointerSegment = (key: string): string => key.replaceAll('~', '~0').replaceAll('/', '~1');

/**
 * Every string of a parsed body that is not well-formed Unicode, values and property names at any
 * depth, as details. A path that runs through such a property name shows U+FFFD in place of each
 * lone surrogate: the answer itself stays well-formed. json-body-limits has capped the depth, so
 * the recursion is bounded.
 */
export const illFormedStrings = (value: unknown, path = '', found: ErrorDetail[] = []): ErrorDetail[] => {
  if (typeof value === 'string') {
    if (!value.isWellFormed()) found.push({ path: path === '' ? '/' : path.toWellFormed(), message: VALUE_MESSAGE });
  } else if (Array.isArray(value)) {
    value.forEach((item, index) => illFormedStrings(item, `${path}/${index}`, found));
  } else if (isPlainObject(value)) {
    for (const [key, item] of Object.entries(value)) {
      const pointer = `${path}/${pointerSegment(key)}`;
      if (!key.isWellFormed()) found.push({ path: pointer.toWellFormed(), message: KEY_MESSAGE });
      illFormedStrings(item, pointer, found);
    }
  }
  return found;
};

/**
 * Refuses a body holding a lone surrogate anywhere (docs/api.md#errors): JSON can carry one as a
 * `\ud800` escape, and it would be stored or echoed as text no UTF-8 consumer can read back. It runs
 * on the parsed (and folded) body just before the schema, and reports the schema's own failures of
 * the same body with it, so one 422 names every problem.
 */
export const wellFormedStrings = (parameterName: string, validate: ValidateFunction): HttpMiddleware => ({
  before: ({ event }) => {
    const found = illFormedStrings(event.body, '', []);
    if (found.length === 0) return;
    const schemaDetails = validate({ body: event.body }) ? [] : toErrorDetails(validate.errors);
    throw new ValidationError(parameterName, [
      ...found,
      ...schemaDetails.map((detail) => ({ ...detail, path: detail.path.toWellFormed() })),
    ]);
  },
});
