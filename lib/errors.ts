// node:http is fetched when a phrase is first asked for, not imported: an ES import evaluates its
// lazily loaded HTTP client too (undici, some 40 ms), and even a require at load costs every
// function's init a few milliseconds for a table only an error answer reads. Node keeps the module.

export interface ErrorDetail {
  path: string;
  message: string;
}

/**
 * The one error hierarchy of the bundle. `status` and `publicMessage` are what a caller sees;
 * `cause` (and the message of the underlying Error) only ever reaches the server log.
 */
export class AppError extends Error {
  readonly status: number;
  readonly publicMessage: string;
  readonly details: ErrorDetail[] | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(
    status: number,
    publicMessage: string,
    options: { cause?: unknown; details?: ErrorDetail[]; headers?: Record<string, string>; logMessage?: string } = {},
  ) {
    super(options.logMessage ?? publicMessage, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.status = status;
    this.publicMessage = publicMessage;
    this.details = options.details;
    this.headers = options.headers;
  }
}

export const reasonPhrase = (status: number): string => process.getBuiltinModule('node:http').STATUS_CODES[status] ?? 'Unknown Status';

/**
 * A failure of a job run outside HTTP (the ticket import, from the CLI or the scheduled Lambda): no
 * status, and a message written for whoever runs the job, shown as is. It names what failed (a
 * file, a row, a page), never a secret or a cell's contents.
 */
export class JobError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A thrown or rejected value as an Error (a non-Error becomes one with its text as the message). */
export const asError = (reason: unknown): Error => (reason instanceof Error ? reason : new Error(String(reason)));

/**
 * An AWS service's answer as the SDK throws it (a ServiceException, or the error of a reply it could
 * not read: both carry `$metadata` with the reply's status): its status and request id. The SDK
 * also puts `$metadata` on errors that got no reply (a refused connection, a timeout), without a
 * status: their message is the SDK's or the system's own. (A library that wraps a reply repeating
 * its message is unwrapped where that library is called: secrets.ts.)
 */
const serviceReplyOf = (error: Error): { status: unknown; requestId?: unknown } | undefined => {
  const { $metadata: metadata } = error as { $metadata?: { httpStatusCode?: unknown; requestId?: unknown } };
  if (typeof metadata !== 'object' || metadata === null || metadata.httpStatusCode === undefined) return undefined;
  return { status: metadata.httpStatusCode, requestId: metadata.requestId };
};

/**
 * An error's message as logs and output may carry it. An AWS service's reply is the exception: its
 * message is the service's own text, and some quote the signed request they refused (DynamoDB's
 * InvalidSignatureException quotes the canonical request, session token included), so only its
 * status and request id are kept, beside its name (`ConditionalCheckFailedException`, `NoSuchKey`).
 */
export const loggableMessage = (error: Error): string => {
  const reply = serviceReplyOf(error);
  if (reply === undefined) return error.message;
  return `AWS error reply (HTTP ${String(reply.status)}, request id ${String(reply.requestId ?? '?')}; its message is not logged)`;
};

/** Whether an error's stack may be logged: its first line repeats the message. */
export const hasLoggableStack = (error: Error): boolean => serviceReplyOf(error) === undefined;

/** `Name: message` of an error, for one log field or one line of output; anything else as text. */
export const describeError = (error: unknown): string =>
  error instanceof Error ? `${error.name}: ${loggableMessage(error)}` : String(error);

export class BadRequestError extends AppError {
  constructor(message = 'Request body is not valid JSON', cause?: unknown) {
    super(400, message, { cause });
  }
}

export class PayloadTooLargeError extends AppError {
  constructor(limitBytes: number) {
    super(413, `Request body exceeds ${limitBytes} bytes`);
  }
}

/** The caller's `Accept` header rules out JSON, the only representation this API has. */
export class NotAcceptableError extends AppError {
  constructor() {
    super(406, 'This endpoint only produces application/json');
  }
}

export class UnsupportedMediaTypeError extends AppError {
  constructor() {
    super(415, 'Content-Type must be application/json');
  }
}

export class NotFoundError extends AppError {
  constructor(message = 'Not Found') {
    super(404, message);
  }
}

export class MethodNotAllowedError extends AppError {
  constructor(allowed: readonly string[]) {
    super(405, 'Method Not Allowed', { headers: { Allow: allowed.join(', ') } });
  }
}

export class ValidationError extends AppError {
  constructor(parameterName: string, details: ErrorDetail[]) {
    super(422, `Request validation failed: Parameter (${parameterName}) failed schema validation`, { details });
  }
}

export class ConflictError extends AppError {
  constructor(message: string) {
    super(409, message);
  }
}

/** A required variable is missing or invalid. The caller sees a generic 500; the log names it. */
export class ConfigError extends AppError {
  readonly variable: string;
  constructor(variable: string, problem: string) {
    super(500, 'Service misconfigured', { logMessage: `Configuration error: ${variable} ${problem}` });
    this.variable = variable;
  }
}

/** The invocation ran out of time before the operation finished. */
export class RequestTimeoutError extends AppError {
  constructor() {
    super(504, 'The request took too long to complete', { logMessage: 'Invocation deadline reached before the handler finished' });
  }
}

/** A body Lambda cannot return (over its 6 MB response limit), even compressed where the client allowed it. */
export class ResponseTooLargeError extends AppError {
  constructor(plainBytes: number, compressed: boolean) {
    // Only GET /devices answers with large bodies: the message says how to get it in parts.
    super(
      500,
      compressed
        ? 'The response is too large to send; page through it with the limit parameter'
        : 'The response is too large to send uncompressed; page through it with the limit parameter, or request it with Accept-Encoding: gzip',
      {
        logMessage: `Response body of ${plainBytes} bytes exceeds Lambda's 6 MB response limit${compressed ? ' even gzip-compressed' : ' (the client does not accept gzip)'}`,
      },
    );
  }
}

export class InternalError extends AppError {
  constructor(cause?: unknown) {
    super(500, 'Internal Server Error', { cause, logMessage: 'Unhandled error' });
  }
}
