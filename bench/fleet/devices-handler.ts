// What the fleet bench's child processes share: the real GET /devices and GET /mobile-devices
// handlers as fresh containers, one timed call, and latency figures.
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { httpEvent, lambdaContext } from '../../test/support/http-events.ts';

export type Handler = (
  event: ReturnType<typeof httpEvent>,
  context: ReturnType<typeof lambdaContext>,
) => Promise<APIGatewayProxyStructuredResultV2>;

/** The device list routes and their summaries, by path, and the function serving each. */
const FUNCTIONS = {
  '/devices': 'devices',
  '/devices/summary': 'devices',
  '/mobile-devices': 'mobile-devices',
  '/mobile-devices/summary': 'mobile-devices',
} as const;
export type DeviceListPath = keyof typeof FUNCTIONS;
export const isDeviceListPath = (path: string): path is DeviceListPath => Object.hasOwn(FUNCTIONS, path);

let containers = 0;
/** A new container: the route's function (functions/devices.ts by default) evaluated afresh (its configuration, tiers and clients). */
export const freshContainer = async (path: DeviceListPath = '/devices'): Promise<Handler> => {
  containers += 1;
  return ((await import(`../../functions/${FUNCTIONS[path]}.ts?container=${containers}`)) as { handler: Handler }).handler;
};

/** One GET of `path` (/devices by default) with `query`, its latency pushed to `latencies`; anything but 200 throws. */
export const call = async (
  handler: Handler,
  query: string,
  latencies: number[],
  path: DeviceListPath = '/devices',
): Promise<APIGatewayProxyStructuredResultV2> => {
  const started = performance.now();
  const result = await handler({ ...httpEvent('GET', path), rawQueryString: query }, lambdaContext(29_000));
  latencies.push(performance.now() - started);
  if (result.statusCode !== 200) throw new Error(`status ${result.statusCode} for ${path}?${query}`);
  return result;
};

/** The `after` of a page's `Link`, or undefined on the last page. */
export const nextAfter = (result: APIGatewayProxyStructuredResultV2): string | undefined =>
  /after=(\d+)>/.exec(String(result.headers?.Link ?? ''))?.[1];

export const summary = (latencies: number[], run?: { requests: number; seconds: number }) => {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * (sorted.length - 1)))]!;
  return { requests: sorted.length, p50_ms: at(0.5), p99_ms: at(0.99), ...(run ? { per_second: run.requests / run.seconds } : {}) };
};
