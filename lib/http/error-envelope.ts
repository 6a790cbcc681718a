import { AppError, InternalError } from '../errors.ts';
import { errorBody, jsonResponse } from './envelope.ts';
import type { HttpMiddleware } from './http-types.ts';

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
