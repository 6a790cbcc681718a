import httpJsonBodyParser from '@middy/http-json-body-parser';
import validator from '@middy/validator';
import type { Ajv, ValidateFunction } from 'ajv';
import { parserErrors, validatorErrors } from './body-errors.ts';
import type { HttpMiddleware } from './http-types.ts';
import { jsonBodyLimits } from './json-body-limits.ts';
import { wellFormedStrings } from './well-formed-strings.ts';

export interface BodySpec {
  /** The name in the 422 message: `Parameter (<name>) failed schema validation`. */
  parameterName: string;
  /** A validator of the event's `{ body }` (generated ahead of time, see lib/validators/). */
  validate: ValidateFunction;
  /** Runs on the parsed body before validation (e.g. folding aliases); throw a ValidationError to refuse. */
  normalize?: (body: unknown) => unknown;
}

/**
 * A route's JSON body as the HTTP chain takes it (make-http-handler.ts): the middlewares that parse
 * it, in the main chain, and its rules, in the request's own chain around the operation (so safe
 * retries keep a 422 as an outcome). Built by the function that has a body, so a route without one
 * bundles none of it (docs/architecture.md#a-request).
 */
export interface JsonBody {
  parsing: readonly HttpMiddleware[];
  rules: readonly HttpMiddleware[];
}

/**
 * Gives the Content-Type header the name Middy's JSON parser looks up. The parser reads only
 * `content-type` and `Content-Type`, but header names are case-insensitive (headers.ts): API Gateway
 * lower-cases them, another caller of the handler (a sample event, a test) may send `CONTENT-TYPE`,
 * and its JSON would otherwise be refused as another content type.
 */
const contentTypeName = (): HttpMiddleware => ({
  before: ({ event }) => {
    const headers = event.headers ?? {};
    if (Object.hasOwn(headers, 'content-type') || Object.hasOwn(headers, 'Content-Type')) return;
    const name = Object.keys(headers).find((candidate) => candidate.toLowerCase() === 'content-type');
    if (name === undefined) return;
    headers['content-type'] = headers[name];
    delete headers[name];
  },
});

/** Runs `normalize` on the parsed body, between parsing and validation. */
const normalizeBody = (normalize: (body: unknown) => unknown): HttpMiddleware => ({
  before: (request) => {
    request.event.body = normalize(request.event.body) as never;
  },
});

/**
 * Parsing: size, JSON syntax and depth (413/400), the parser, and its errors as the project's own
 * (415/400). Rules: folding (`normalize`), well-formed Unicode and the schema (422), the validator's
 * errors as the 422 with its details.
 */
export const jsonBody = ({ parameterName, validate, normalize }: BodySpec): JsonBody => ({
  parsing: [jsonBodyLimits(parameterName), contentTypeName(), httpJsonBodyParser(), parserErrors(parameterName)],
  rules: [
    ...(normalize ? [normalizeBody(normalize)] : []),
    wellFormedStrings(parameterName, validate),
    // @middy/validator's typings say `Ajv`, but it takes (and calls) a compiled validate function.
    validator({ eventSchema: validate as unknown as Ajv }),
    validatorErrors(parameterName),
  ],
});
