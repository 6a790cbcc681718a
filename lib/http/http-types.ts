import type middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';

/** What every middleware of the HTTP chain sees: an HTTP API (payload 2.0) event and a structured result. */
export type HttpEvent = APIGatewayProxyEventV2;
/** A structured result; `renderBody` is a body left to render on the way out, only if it is sent (response-encoding.ts). */
export type HttpResult = APIGatewayProxyStructuredResultV2 & { renderBody?: () => string };
export type HttpMiddleware = middy.MiddlewareObj<HttpEvent, HttpResult, Error, Context>;

/** What the main chain runs once its own middlewares passed: the body's rules (if any) and the operation. */
export type HttpOperation = (event: HttpEvent, context: Context) => Promise<HttpResult>;
