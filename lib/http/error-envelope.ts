import type { ErrorObject } from 'ajv';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { AppError, InternalError, reasonPhrase, type ErrorDetail } from '../errors.ts';
import type { HttpMiddleware } from './http-types.ts';

/** The error body every endpoint answers with: its details from AJV's errors, and the envelope itself. */

// Only AJV's error type is used here: the validators are generated standalone code
// (scripts/generate-validators.ts), so no function bundles AJV itself.
const BODY_PREFIX = /^\/body/;

/** AJV errors → `{ path, message }` details naming the field (JSON Pointer) and the rule that failed. */
export const toErrorDetails = (errors: readonly ErrorObject[] | null | undefined): ErrorDetail[] =>
  (errors ?? []).map((error) => {
    let path = error.instancePath.replace(BODY_PREFIX, '');
    const params = error.params as Record<string, unknown>;
    if (error.keyword === 'required') path += `/${String(params.missingProperty)}`;
    if (error.keyword === 'additionalProperties') path += `/${String(params.additionalProperty)}`;
    const message =
      error.keyword === 'additionalProperties' ? 'must NOT have additional properties' : (error.message ?? `failed rule ${error.keyword}`);
    return { path: path === '' ? '/' : path, message };
  });

const JSON_HEADERS = { 'Content-Type': 'application/json' } as const;

/** The one error body of every endpoint (docs/api.md#errors). */
const errorBody = (status: number, message: string, details?: ErrorDetail[]) => ({
  error: {
    message,
    status,
    httpMessage: reasonPhrase(status),
    ...(details && details.length > 0 ? { details } : {}),
  },
});

/** A JSON response, the envelope's and every operation's: the body as given, or serialized. */
export const jsonResponse = (status: number, body: unknown, headers: Record<string, string> = {}): APIGatewayProxyStructuredResultV2 => ({
  statusCode: status,
  headers: { ...JSON_HEADERS, ...headers },
  body: body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body),
});

/**
 * The one place an error becomes a response: an AppError answers with its status, public message,
 * details and headers; anything else is a generic 500. The error left on the request for the access
 * log is the mapped one, its cause chain intact.
 */
export const errorEnvelope = (): HttpMiddleware => ({
  onError: (request) => {
    const error = request.error instanceof AppError ? request.error : new InternalError(request.error);
    request.error = error;
    request.response = jsonResponse(error.status, errorBody(error.status, error.publicMessage, error.details), error.headers);
  },
});
