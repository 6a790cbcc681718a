import type middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';

/** What every middleware of the HTTP chain sees: an HTTP API (payload 2.0) event and a structured result. */
export type HttpEvent = APIGatewayProxyEventV2;
export type HttpResult = APIGatewayProxyStructuredResultV2;
export type HttpMiddleware = middy.MiddlewareObj<HttpEvent, HttpResult, Error, Context>;
