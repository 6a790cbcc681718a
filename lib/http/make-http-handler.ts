import middy from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import validator from '@middy/validator';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Ajv, ValidateFunction } from 'ajv';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { writeAccessLog } from './access-log.ts';
import { exceedsJsonDepth } from './json-depth.ts';
import { errorEnvelope, jsonResponse } from './envelope.ts';
import { makeResponseEncoder } from './response-encoding.ts';
import { matchRoute, type RouteKey } from './routes.ts';
import { toErrorDetails } from './error-details.ts';
import {
  AppError,
  BadRequestError,
  InternalError,
  MethodNotAllowedError,
  NotFoundError,
  PayloadTooLargeError,
  RequestTimeoutError,
  UnsupportedMediaTypeError,
  ValidationError,
} from '../errors.ts';

/** Bodies above this are refused before parsing; every body of this API is a few hundred bytes. */
export const MAX_BODY_BYTES = 64 * 1024;
/** No body of this API nests; deeper JSON is a schema failure, refused before the recursive parser. */
export const MAX_JSON_DEPTH = 64;
/** Time kept back from the Lambda deadline to answer 504 in the envelope and write the access line. */
export const TIMEOUT_MARGIN_MS = 200;

export interface HttpRequest<TBody> {
  body: TBody;
  pathParameters: Readonly<Record<string, string | undefined>>;
  headers: Readonly<Record<string, string | undefined>>;
  /** Milliseconds left before Lambda stops this invocation. */
  remainingTimeMs: () => number;
  /** Adds keys to this request's access-log line (set them before throwing to keep them on failure). */
  annotate: (fields: Record<string, unknown>) => void;
}

export interface HttpResponse {
  status: number;
  /** Serialized with JSON.stringify unless `json` is given. */
  body?: unknown;
  /** An already serialized JSON body, passed through untouched. */
  json?: string;
  headers?: Record<string, string>;
}

export interface BodySpec {
  /** The name in the 422 message: `Parameter (<name>) failed schema validation`. */
  parameterName: string;
  /** Compiled with `compileBodyValidator`, so it validates `{ body }`. */
  validate: ValidateFunction;
  /** Runs on the parsed body before validation (e.g. folding aliases); throw a ValidationError to refuse. */
  normalize?: (body: unknown) => unknown;
}

export interface HttpHandlerSpec<TBody> {
  route: RouteKey;
  logger: Logger;
  body?: BodySpec;
  handle: (request: HttpRequest<TBody>) => Promise<HttpResponse>;
}

type Event = APIGatewayProxyEventV2;
type Result = APIGatewayProxyStructuredResultV2;

interface RequestState {
  startedAt: number;
  annotations: Record<string, unknown>;
  logged: boolean;
}

const STATE = Symbol('http-request-state');
type StatefulContext = Context & { [STATE]?: RequestState };

const methodOf = (event: Event): string => event.requestContext?.http?.method ?? 'GET';
const pathOf = (event: Event): string => event.rawPath ?? event.requestContext?.http?.path ?? '/';

const bodyText = (event: Event): string =>
  event.isBase64Encoded ? Buffer.from(event.body ?? '', 'base64').toString('utf8') : (event.body ?? '');

/** The content types @middy/http-json-body-parser accepts (others get its 415). */
const JSON_CONTENT_TYPE = /^application\/([a-z0-9.+-]+\+)?json(;|$)/i;

/** Valid JSON nested past MAX_JSON_DEPTH fails the schema (422); invalid JSON stays a 400. */
const refuseDeepJson = (event: Event, body: BodySpec): void => {
  const contentType = event.headers?.['content-type'] ?? event.headers?.['Content-Type'];
  if (typeof event.body !== 'string' || !JSON_CONTENT_TYPE.test(contentType ?? '')) return;
  const text = bodyText(event);
  if (!exceedsJsonDepth(text, MAX_JSON_DEPTH)) return;
  try {
    JSON.parse(text); // V8's parser is iterative: no reviver, no recursion
  } catch (cause) {
    throw new BadRequestError(undefined, cause);
  }
  throw new ValidationError(body.parameterName, [{ path: '/', message: `must not nest deeper than ${MAX_JSON_DEPTH} levels` }]);
};

const bodyBytes = (event: Event): number => {
  if (typeof event.body !== 'string') return 0;
  return event.isBase64Encoded ? Math.floor((event.body.length * 3) / 4) : Buffer.byteLength(event.body);
};

/** Maps anything thrown in the chain to the project's error hierarchy. */
const toAppError = (error: unknown, body: BodySpec | undefined): AppError => {
  if (error instanceof AppError) return error;
  const cause = (error as { cause?: { package?: string; data?: unknown } } | null)?.cause;
  const status = (error as { statusCode?: number } | null)?.statusCode;
  if (cause?.package === '@middy/http-json-body-parser') {
    if (status === 415) return new UnsupportedMediaTypeError();
    // Valid JSON with a prototype-polluting key: a schema failure (no body here has such a key).
    if (body && (error as Error).message === 'Forbidden key in JSON body') {
      return new ValidationError(body.parameterName, [{ path: `/${String(cause.data)}`, message: 'must NOT have additional properties' }]);
    }
    return new BadRequestError(undefined, error);
  }
  if (cause?.package === '@middy/validator' && status === 400 && body) {
    return new ValidationError(body.parameterName, toErrorDetails(cause.data as never));
  }
  return new InternalError(error);
};

/**
 * The one Middy chain of every HTTP Lambda: routing guard (404/405), body size cap (413), JSON
 * parsing (400/415), schema validation (422), the error envelope, and exactly one access-log line.
 */
export const makeHttpHandler = <TBody = undefined>(spec: HttpHandlerSpec<TBody>) => {
  const encode = makeResponseEncoder();
  const core = async (event: Event, context: StatefulContext): Promise<Result> => {
    const state = context[STATE]!;
    const response = await spec.handle({
      body: event.body as TBody,
      pathParameters: event.pathParameters ?? {},
      headers: event.headers ?? {},
      remainingTimeMs: () => (typeof context.getRemainingTimeInMillis === 'function' ? context.getRemainingTimeInMillis() : 30_000),
      annotate: (fields) => Object.assign(state.annotations, fields),
    });
    const result =
      response.json === undefined
        ? jsonResponse(response.status, response.body, response.headers)
        : { statusCode: response.status, headers: { 'Content-Type': 'application/json', ...response.headers }, body: response.json };
    return encode(result, event.headers?.['accept-encoding'] ?? event.headers?.['Accept-Encoding']);
  };

  // Fixed at INFO whatever POWERTOOLS_LOG_LEVEL says: the one line per request is the access record,
  // not a diagnostic to be filtered away.
  const accessLogger = spec.logger.createChild({ logLevel: 'INFO' });

  const finish = (event: Event, context: StatefulContext, result: Result, error: unknown): void => {
    const state = context[STATE];
    if (!state || state.logged) return;
    state.logged = true;
    writeAccessLog(accessLogger, {
      httpMethod: methodOf(event),
      path: pathOf(event),
      statusCode: result.statusCode ?? 200,
      durationMs: performance.now() - state.startedAt,
      requestId: context.awsRequestId,
      annotations: state.annotations,
      error,
    });
  };

  const boundary: middy.MiddlewareObj<Event, Result, Error, StatefulContext> = {
    before: (request) => {
      request.context[STATE] = { startedAt: performance.now(), annotations: {}, logged: false };
      const match = matchRoute(methodOf(request.event), pathOf(request.event));
      if (match.kind === 'not-found') throw new NotFoundError();
      if (match.kind === 'method-not-allowed') throw new MethodNotAllowedError(match.allowed);
      // Only the function that owns a route answers it; the `$default` route is served by whichever
      // function API Gateway sends it to, so a route owned by another function is "not found" here.
      if (match.routeKey !== spec.route) throw new NotFoundError();
      if (spec.body && bodyBytes(request.event) > MAX_BODY_BYTES) throw new PayloadTooLargeError(MAX_BODY_BYTES);
      if (spec.body) refuseDeepJson(request.event, spec.body);
    },
    after: (request) => {
      finish(request.event, request.context, request.response!, undefined);
    },
    onError: (request) => {
      request.context[STATE] ??= { startedAt: performance.now(), annotations: {}, logged: false };
      const appError = toAppError(request.error, spec.body);
      request.response = jsonResponse(
        appError.status,
        errorEnvelope(appError.status, appError.publicMessage, appError.details),
        appError.headers,
      );
      finish(request.event, request.context, request.response, appError.status >= 500 ? appError : undefined);
    },
  };

  const chain = middy<Event, Result, Error, StatefulContext>({
    timeoutEarlyInMillis: TIMEOUT_MARGIN_MS,
    timeoutEarlyResponse: () => {
      throw new RequestTimeoutError();
    },
  }).use(boundary);
  if (spec.body) {
    const { normalize, validate } = spec.body;
    chain.use(httpJsonBodyParser());
    if (normalize) chain.use({ before: (request) => void (request.event.body = normalize(request.event.body) as never) });
    // @middy/validator's typings say `Ajv`, but it takes (and calls) a compiled validate function.
    chain.use(validator({ eventSchema: validate as unknown as Ajv }));
  }
  return chain.handler(core);
};
