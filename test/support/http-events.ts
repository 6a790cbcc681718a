import { readFile } from 'node:fs/promises';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { matchRoute } from '../../lib/http/routes.ts';

/** Loads a sample event from `events/`, the same files `npm run invoke` uses. */
export const loadEvent = async (relativePath: string): Promise<APIGatewayProxyEventV2> =>
  JSON.parse(await readFile(new URL(`../../events/${relativePath}`, import.meta.url), 'utf8')) as APIGatewayProxyEventV2;

/** The route API Gateway would pick: a route of the API matched exactly, else `$default`. */
const routeKeyOf = (method: string, path: string): string => {
  const match = matchRoute(method, path);
  return match.kind === 'found' ? match.routeKey : '$default';
};

/** Builds an HTTP API v2 event for a method, path and raw body, by the route API Gateway would pick unless `routeKey` says. */
export const httpEvent = (
  method: string,
  path: string,
  options: { body?: string; headers?: Record<string, string>; pathParameters?: Record<string, string>; routeKey?: string } = {},
): APIGatewayProxyEventV2 => ({
  version: '2.0',
  routeKey: options.routeKey ?? routeKeyOf(method, path),
  rawPath: path,
  rawQueryString: '',
  headers: options.headers ?? (options.body === undefined ? {} : { 'content-type': 'application/json' }),
  ...(options.pathParameters ? { pathParameters: options.pathParameters } : {}),
  requestContext: {
    accountId: '123456789012',
    apiId: 'test',
    domainName: 'localhost',
    domainPrefix: 'localhost',
    http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'vitest' },
    requestId: `test-${Math.random().toString(36).slice(2)}`,
    routeKey: options.routeKey ?? routeKeyOf(method, path),
    stage: '$default',
    time: '22/Nov/2026:10:00:00 +0000',
    timeEpoch: 1_795_000_000_000,
  },
  ...(options.body === undefined ? {} : { body: options.body }),
  isBase64Encoded: false,
});

let invocation = 0;
/** A Lambda context with a fixed time budget. */
export const lambdaContext = (remainingMs = 30_000): Context => {
  const deadline = Date.now() + remainingMs;
  invocation += 1;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: 'test',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:test',
    memoryLimitInMB: '1024',
    awsRequestId: `req-${invocation}`,
    logGroupName: '/aws/lambda/test',
    logStreamName: 'test',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
};
