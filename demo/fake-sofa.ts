import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The macadmins SOFA feeds on 127.0.0.1: trimmed copies of the real macOS, iOS and tvOS feeds
 * (demo/sofa/, docs/local-stack.md), at the feeds' own paths, with fault controls for tests. No
 * test-framework imports: `npm start` serves it when asked for a demo feed.
 */

/**
 * Which feed: the macOS copies, v1 (September 2025, Ventura's RSRs) or v2 (August 2026, with BSIs);
 * the iOS copies of August 2026 (v2: 26, 18 with device-specific releases for older models, 17, one
 * BSI); the tvOS copies, v1 (September 2025: 18, 17) and v2 (August 2026: 26, 18).
 */
export type SofaFeedVersion = 'v1' | 'v2' | 'ios-v1' | 'ios-v2' | 'tvos-v1' | 'tvos-v2';

const SOFA_FEED_PATHS: Readonly<Record<SofaFeedVersion, string>> = {
  v1: '/v1/macos_data_feed.json',
  v2: '/v2/macos_data_feed.json',
  'ios-v1': '/v1/ios_data_feed.json',
  'ios-v2': '/v2/ios_data_feed.json',
  'tvos-v1': '/v1/tvos_data_feed.json',
  'tvos-v2': '/v2/tvos_data_feed.json',
};

const FIXTURES: Readonly<Record<SofaFeedVersion, URL>> = {
  v1: new URL('./sofa/macos-data-feed-v1.json', import.meta.url),
  v2: new URL('./sofa/macos-data-feed-v2.json', import.meta.url),
  'ios-v1': new URL('./sofa/ios-data-feed-v1.json', import.meta.url),
  'ios-v2': new URL('./sofa/ios-data-feed-v2.json', import.meta.url),
  'tvos-v1': new URL('./sofa/tvos-data-feed-v1.json', import.meta.url),
  'tvos-v2': new URL('./sofa/tvos-data-feed-v2.json', import.meta.url),
};

/** One of the feeds, parsed (a fresh object each time: callers may change it). */
export const readSofaFeed = async (version: SofaFeedVersion): Promise<Record<string, unknown>> =>
  JSON.parse(await readFile(FIXTURES[version], 'utf8')) as Record<string, unknown>;

/** What a feed request gets instead of the feed (`times` requests, or every one while set). */
export type SofaFault = (
  | { kind: 'status'; status: number }
  /** A 429 as a CDN's rate limit sends it. */
  | { kind: 'rate-limited'; retryAfter?: string }
  /** The status line and part of the feed, then the socket destroyed. */
  | { kind: 'drop' }
  /** A 200 announcing `bytes` bytes in its Content-Length (never sent). */
  | { kind: 'oversize'; bytes: number }
  /** A 200 whose body is not JSON. */
  | { kind: 'garbage' }
  /** A 200 with JSON that is not a SOFA feed. */
  | { kind: 'wrong-shape' }
  /** Never answers (until the server closes). */
  | { kind: 'hang' }
) & { times?: number };

export interface FakeSofa {
  /** The server's base URL; the feeds are at `url + SOFA_FEED_PATHS[version]`. */
  url: string;
  feedUrl: (version: SofaFeedVersion) => string;
  /** Serves `feed` at a version's path from now on (a feed that moved). */
  setFeed: (version: SofaFeedVersion, feed: unknown) => void;
  /** Answers `path` with a 302 to a version's feed, as a mirror or static host may. */
  redirect: (path: string, version: SofaFeedVersion) => void;
  /** Every request gets `fault` until it is cleared with undefined. */
  setFault: (fault: SofaFault | undefined) => void;
  /** Requests received, faulted ones included. */
  requests: () => number;
  /** The `User-Agent` of the latest request (SOFA asks integrations to send one). */
  lastUserAgent: () => string | undefined;
  close: () => Promise<void>;
}

export const startFakeSofa = async (options: { port?: number } = {}): Promise<FakeSofa> => {
  const feeds = new Map<string, string>();
  for (const version of Object.keys(SOFA_FEED_PATHS) as SofaFeedVersion[])
    feeds.set(SOFA_FEED_PATHS[version], JSON.stringify(await readSofaFeed(version)));
  let fault: SofaFault | undefined;
  let requests = 0;
  let lastUserAgent: string | undefined;
  const redirects = new Map<string, string>();

  const server = createServer((request, response) => {
    requests += 1;
    lastUserAgent = request.headers['user-agent'];
    const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
    const feed = request.method === 'GET' ? feeds.get(path) : undefined;
    const send = (status: number, body: string, type = 'application/json', headers: Record<string, string> = {}) => {
      response.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body), ...headers });
      response.end(body);
    };
    const location = redirects.get(path);
    if (location !== undefined) return send(302, '', 'text/plain', { location });
    if (feed === undefined) return send(404, '<html><body>Not Found</body></html>', 'text/html');
    const due = fault !== undefined && fault.times !== 0 ? fault : undefined;
    if (due?.times !== undefined) due.times -= 1;
    switch (due?.kind) {
      case 'hang':
        return;
      case 'status':
        return send(due.status, '<html><body>upstream error</body></html>', 'text/html');
      case 'rate-limited':
        return send(
          429,
          '<html><body>Too Many Requests</body></html>',
          'text/html',
          due.retryAfter === undefined ? {} : { 'retry-after': due.retryAfter },
        );
      case 'drop':
        response.writeHead(200, { 'content-type': 'application/json' });
        response.write(feed.slice(0, 100));
        setImmediate(() => response.socket?.destroy());
        return;
      case 'oversize':
        response.writeHead(200, { 'content-type': 'application/json', 'content-length': String(due.bytes) });
        response.write(feed.slice(0, 100));
        return;
      case 'garbage':
        return send(200, '{"UpdateHash":"0b13', 'application/json');
      case 'wrong-shape':
        return send(200, JSON.stringify({ OSVersions: 'Tahoe 26', UpdateHash: '0b1345' }));
      default:
        return send(200, feed);
    }
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    feedUrl: (version) => `${url}${SOFA_FEED_PATHS[version]}`,
    setFeed: (version, feed) => {
      feeds.set(SOFA_FEED_PATHS[version], JSON.stringify(feed));
    },
    redirect: (path, version) => {
      redirects.set(path, SOFA_FEED_PATHS[version]);
    },
    setFault: (next) => {
      fault = next === undefined ? undefined : { ...next };
    },
    requests: () => requests,
    lastUserAgent: () => lastUserAgent,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};
