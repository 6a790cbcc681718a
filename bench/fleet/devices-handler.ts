// What the fleet bench's child processes share: the real GET /devices handler as fresh containers,
// one timed call, and latency figures.
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { httpEvent, lambdaContext } from '../../test/support/http-events.ts';

export type Handler = (event: ReturnType<typeof httpEvent>, context: ReturnType<typeof lambdaContext>) => Promise<APIGatewayProxyStructuredResultV2>;

let containers = 0;
/** A new container: functions/devices.ts evaluated afresh (its configuration, tiers and clients). */
export const freshContainer = async (): Promise<Handler> => {
  containers += 1;
  return ((await import(`../../functions/devices.ts?container=${containers}`)) as { handler: Handler }).handler;
};

/** One GET /devices with `query`, its latency pushed to `latencies`; anything but 200 throws. */
export const call = async (handler: Handler, query: string, latencies: number[]): Promise<APIGatewayProxyStructuredResultV2> => {
  const started = performance.now();
  const result = await handler({ ...httpEvent('GET', '/devices'), rawQueryString: query }, lambdaContext(29_000));
  latencies.push(performance.now() - started);
  if (result.statusCode !== 200) throw new Error(`status ${result.statusCode} for ${query}`);
  return result;
};

export const summary = (latencies: number[], run?: { requests: number; seconds: number }) => {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * (sorted.length - 1)))]!;
  return { requests: sorted.length, p50_ms: at(0.5), p99_ms: at(0.99), ...(run ? { per_second: run.requests / run.seconds } : {}) };
};
