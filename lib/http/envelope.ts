import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { reasonPhrase, type ErrorDetail } from '../errors.ts';

const JSON_HEADERS = { 'Content-Type': 'application/json' } as const;

/** The one error body of every endpoint (docs/api.md#errors). */
export const errorBody = (status: number, message: string, details?: ErrorDetail[]) => ({
  error: {
    message,
    status,
    httpMessage: reasonPhrase(status),
    ...(details && details.length > 0 ? { details } : {}),
  },
});

export const jsonResponse = (status: number, body: unknown, headers: Record<string, string> = {}): APIGatewayProxyStructuredResultV2 => ({
  statusCode: status,
  headers: { ...JSON_HEADERS, ...headers },
  body: body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body),
});
