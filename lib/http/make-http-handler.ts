import middy from '@middy/core';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';
import { remainingTimeOf } from '../async/deadline.ts';
import { RequestTimeoutError } from '../errors.ts';
import { accessLog, addAccessLogFields } from './access-log.ts';
import { errorEnvelope, jsonResponse } from './error-envelope.ts';
import type { HttpEvent, HttpMiddleware, HttpOperation, HttpResult } from './http-types.ts';
import type { JsonBody } from './json-body.ts';
import { queryParameters, type QuerySpec } from './query-parameters.ts';
import { requestOriginOf } from './request-origin.ts';
import { responseEncoding } from './response-encoding.ts';
import { routeGuard, routeOf, type RouteKey } from './routes.ts';

/** Time kept back from the Lambda deadline to answer 504 in the envelope and write the access line. */
const TIMEOUT_MARGIN_MS = 200;
/** Without a Lambda context (a direct call), a request may take what API Gateway waits for an integration. */
const API_GATEWAY_TIMEOUT_MS = 30_000;

export interface HttpRequest<TBody, TQuery> {
  /** Which of the handler's routes the request came by. */
  route: RouteKey;
  body: TBody;
  /** The validated query when the route has query rules; otherwise empty. */
  query: TQuery;
  pathParameters: Readonly<Record<string, string | undefined>>;
  headers: Readonly<Record<string, string | undefined>>;
  /** Milliseconds left before Lambda stops this invocation. */
  remainingTimeMs: () => number;
  /** Adds keys to this request's access-log line (set them before throwing to keep them on failure). */
  annotate: (fields: Record<string, unknown>) => void;
  /**
   * Names the request when it carries an `Idempotency-Key` (the caller and its key, hashed), so an
   * operation can recognise what an earlier attempt of it made; undefined otherwise.
   */
  origin: string | undefined;
}

export interface HttpResponse {
  /** A `conditional` route's 304 is the response encoding's (response-encoding.ts), never the handler's. */
  status: number;
  /** Serialized with JSON.stringify unless `json` is given. */
  body?: unknown;
  /**
   * An already serialized JSON body, passed through untouched; or how to render it, called only
   * when the body is sent and not kept already (a 304 of a `conditional` route renders nothing).
   */
  json?: string | (() => string);
  headers?: Record<string, string>;
}

export interface HttpHandlerSpec<TBody, TQuery> {
  /** The routes the function serves (usually one): any other request is 404 or 405. */
  routes: readonly [RouteKey, ...RouteKey[]];
  logger: Logger;
  /** The route's JSON body: parsing and its rules (json-body.ts's `jsonBody`), so only routes with a body bundle them. */
  body?: JsonBody;
  /** Each route's query rules; a route without them takes no query. */
  query?: Partial<Record<RouteKey, QuerySpec>>;
  /**
   * Keys every access line of this route starts with, once the route is known to be this one (e.g.
   * `cache_tier` on GET /devices, so a refused query's line has it too); the handler may overwrite them.
   */
  logFields?: Record<string, unknown>;
  /**
   * The route's `Accept` rule, checked after the body's rules so an invalid body still gets its 422:
   * json-accept.ts's `jsonAccept()` for a route that answers JSON only (406 otherwise).
   */
  accept?: HttpMiddleware;
  /** The route answers conditional GETs on its ETag (response-encoding.ts). */
  conditional?: boolean;
  /**
   * Wraps what decides the outcome (the body's rules and the operation), e.g. safe retries with an
   * Idempotency-Key (idempotent-requests.ts). The function builds it, so only a function that uses
   * a wrapper bundles what it needs.
   */
  wrapOperation?: (operation: HttpOperation) => HttpOperation;
  handle: (request: HttpRequest<TBody, TQuery>) => Promise<HttpResponse>;
}

/** Starts the request's access line with the route's own keys. */
const routeLogFields = (fields: Record<string, unknown>): HttpMiddleware => ({
  before: (request) => addAccessLogFields(request.context, fields),
});

/**
 * The request's own rules, a Middy chain of their own around the operation: for a body, folding,
 * well-formed Unicode and the schema (422), and the translation of the validator's errors; then, for
 * a route that answers JSON only, the `Accept` check (406), so an invalid body still gets its 422.
 * Kept apart from the main chain so that safe retries wrap the rules together with the operation:
 * the 422 they answer is an outcome kept and replayed like the operation's own (a 406 is not kept).
 * The main chain answers the deadline.
 */
const withRequestRules = (body: JsonBody | undefined, accept: HttpMiddleware | undefined, operation: HttpOperation): HttpOperation => {
  if (body === undefined && accept === undefined) return operation;
  const rules = middy<HttpEvent, HttpResult, Error, Context>({ timeoutEarlyInMillis: 0 });
  for (const middleware of body?.rules ?? []) rules.use(middleware);
  if (accept) rules.use(accept);
  return rules.handler(operation);
};

/**
 * The one Middy chain of every HTTP Lambda, composed here and only here, one concern a middleware;
 * their order, and why every answer (replays included) leaves through all of them with one access
 * line: docs/architecture.md#a-request. A request still running TIMEOUT_MARGIN_MS before the Lambda
 * deadline is answered 504.
 */
export const makeHttpHandler = <TBody = undefined, TQuery = Record<string, never>>(spec: HttpHandlerSpec<TBody, TQuery>) => {
  const chain = middy<HttpEvent, HttpResult, Error, Context>({
    timeoutEarlyInMillis: TIMEOUT_MARGIN_MS,
    timeoutEarlyResponse: () => {
      throw new RequestTimeoutError();
    },
  })
    .use(accessLog(spec.logger))
    .use(errorEnvelope())
    .use(responseEncoding({ conditional: spec.conditional === true }))
    .use(routeGuard(spec.routes));
  if (spec.logFields) chain.use(routeLogFields(spec.logFields));
  const query = spec.query;
  if (query) chain.use(queryParameters((event) => query[routeOf(event)]));

  let operation: HttpOperation = async (event, context) => {
    const route = routeOf(event);
    const response = await spec.handle({
      route,
      body: event.body as TBody,
      query: (query?.[route] ? event.queryStringParameters : {}) as TQuery,
      pathParameters: event.pathParameters ?? {},
      headers: event.headers ?? {},
      remainingTimeMs: remainingTimeOf(context, API_GATEWAY_TIMEOUT_MS),
      annotate: (fields) => addAccessLogFields(context, fields),
      origin: requestOriginOf(context),
    });
    if (response.json === undefined) return jsonResponse(response.status, response.body, response.headers);
    const result = { statusCode: response.status, headers: { 'Content-Type': 'application/json', ...response.headers } };
    return typeof response.json === 'string' ? { ...result, body: response.json } : { ...result, renderBody: response.json };
  };
  for (const middleware of spec.body?.parsing ?? []) chain.use(middleware);
  operation = withRequestRules(spec.body, spec.accept, operation);
  if (spec.wrapOperation) operation = spec.wrapOperation(operation);
  return chain.handler(operation);
};
