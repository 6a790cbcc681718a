import type middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';

/** What every middleware of the HTTP chain sees: an HTTP API (payload 2.0) event and a structured result. */
export type HttpEvent = APIGatewayProxyEventV2;
export type HttpResult = APIGatewayProxyStructuredResultV2;
export type HttpMiddleware = middy.MiddlewareObj<HttpEvent, HttpResult, Error, Context>;

/** What the main chain runs once its own middlewares passed: the body's rules (if any) and the operation. */
export type HttpOperation = (event: HttpEvent, context: Context) => Promise<HttpResult>;
