import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A ticketing system's user listing as a real HTTP server on loopback, in Zendesk's shapes (its
 * `/api/v2/users.json`, here at `/api/v1`), HTTP basic auth:
 * - page numbers, `?page=N`: `{ users, next_page, previous_page, count }`, 100 users a page, and
 *   Zendesk's 400 `InvalidPaginationDepth` past 10,000 users (page × page size);
 * - cursors, `?page[size]=N` then `page[after]=…`: `{ users, meta: { has_more, after_cursor,
 *   before_cursor }, links: { next, prev } }`, the cursor an opaque base64 keyset on the last id;
 * - rate limits: `X-Rate-Limit`, `X-Rate-Limit-Remaining`, `ratelimit-limit`, `ratelimit-remaining`
 *   and `ratelimit-reset` (seconds until the window resets) on every answer, and a 429 with
 *   `Retry-After` past the limit.
 * Ids are decimal text so values above 2^53 go out exactly. No vitest imports: scripts may use it
 * as a demo destination.
 */
export interface FakeTicketingUser {
  /** Exact decimal text, written into the JSON unquoted. */
  id: string;
  email: string | null;
  name: string;
}

/** One scripted answer for the next request of a page; consumed in order. */
export type TicketingFault =
  | { kind: 'status'; status: number; retryAfter?: string }
  | { kind: 'garbage' }
  | { kind: 'wrong-shape' }
  | { kind: 'hang' }
  | { kind: 'redirect'; location: string }
  /** Cursor paging: the page, but its `links.next` leads back to this very request. */
  | { kind: 'repeat-cursor' }
  /** Cursor paging: the page, but its `after_cursor` (and so `links.next`) is the cursor it was asked with. */
  | { kind: 'stuck-cursor' };

export type FakePagination = 'pages' | 'cursor';

export interface FakeTicketingOptions {
  users?: FakeTicketingUser[];
  username?: string;
  password?: string;
  pageSize?: number;
  /** Leave `count` out of every page so clients must follow `next_page`. */
  omitCount?: boolean;
  /** State `count` on page 1 only (some listings do). */
  countOnFirstPageOnly?: boolean;
  /** The `count` every page states instead of the real one: a stale count, as Zendesk caches it for up to a day. */
  statedCount?: number;
  /** Records page-number paging may reach (page × page size); past it a 400 InvalidPaginationDepth. Default 10,000; null: no limit. */
  offsetLimit?: number | null;
  /** Requests allowed per window, and the window (default 700 a minute, Zendesk's). */
  rateLimit?: { limit: number; windowMs: number };
  /** How long each answer takes (default 5 ms, so concurrent reads overlap). */
  latencyMs?: number;
  /** False: `page[size]` is ignored and every request read by page number, as a listing without cursor paging would. */
  cursorPaging?: boolean;
  /** Base URL written into `next_page` and `links` (default: this server). */
  nextPageBase?: string;
  /**
   * Called after each page is served (its number, or its place in a cursor read), with the live
   * user list, which it may change (a user deleted or added at the destination while a client reads
   * the listing shifts every later page).
   */
  afterPage?: (page: number, users: FakeTicketingUser[]) => void;
}

/** One request as the fake saw it; times from Date.now(). */
export interface FakeTicketingRequest {
  pagination: FakePagination;
  /** The page number, or the page's place in a cursor read (from 1). */
  page: number;
  arrivedAt: number;
  answeredAt: number;
  status: number;
  /** `X-Rate-Limit-Remaining` of the answer, and its `ratelimit-reset` in seconds. */
  remaining: number | undefined;
  resetSeconds: number | undefined;
}

export interface FakeTicketing {
  url: string;
  username: string;
  password: string;
  /** Page numbers requested, in arrival order (authorized or not). */
  requests: number[];
  /** Every answered request, both paginations, in the order answered. */
  log: FakeTicketingRequest[];
  /** The next request for `page` (its place, for cursor paging) gets `fault` instead of the page (queue several by calling again). */
  failNext: (page: number, fault: TicketingFault, pagination?: FakePagination) => void;
  /** Largest number of requests in flight at once. */
  maxConcurrent: () => number;
  close: () => Promise<void>;
}

export const DEMO_TICKETING_CREDENTIALS = { username: 'import-bot@example.com', password: 'ticketing-demo-password' } as const;

/** `count` users with ids above 2^53 (so rounding would show) and mixed-case emails. */
export const generateTicketingUsers = (count: number, firstId = 9_007_199_254_740_993n): FakeTicketingUser[] =>
  Array.from({ length: count }, (_unused, index) => ({
    id: (firstId + BigInt(index) * 2n).toString(),
    email: `Agent.${index}@Example.com`,
    name: `Agent ${index}`,
  }));

const userJson = (user: FakeTicketingUser): string =>
  `{"id":${user.id},"name":${JSON.stringify(user.name)},"email":${JSON.stringify(user.email)},"role":"end-user"}`;

/** Zendesk's answer to page-number paging past 10,000 records. */
const PAGINATION_DEPTH_BODY = JSON.stringify({
  errors: [
    {
      code: 'InvalidPaginationDepth',
      title: 'Pagination requests using Offset Pagination are limited to page 100 or up to 10000 records (page * per_page)',
      detail:
        'There are limits to the page depth in Offset Pagination. Offset Pagination will be deprecated fully in the near future.\n' +
        'Please switch to Cursor Pagination at the earliest. Cursor Pagination does not have any limits.\n',
    },
  ],
});

/** An opaque cursor as Zendesk's look (base64 of a small JSON object): the keyset id, and its place as a fallback. */
const encodeCursor = (user: FakeTicketingUser, index: number): string =>
  Buffer.from(JSON.stringify({ o: 'id', v: user.id, p: index })).toString('base64');
const decodeCursor = (cursor: string): { v: string; p: number } | undefined => {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64').toString('utf8')) as { v?: unknown; p?: unknown };
    return typeof parsed.v === 'string' && typeof parsed.p === 'number' ? { v: parsed.v, p: parsed.p } : undefined;
  } catch {
    return undefined;
  }
};

const MAX_CURSOR_PAGE_SIZE = 100;

export const startFakeTicketing = async (options: FakeTicketingOptions = {}): Promise<FakeTicketing> => {
  const users = [...(options.users ?? [])];
  const username = options.username ?? DEMO_TICKETING_CREDENTIALS.username;
  const password = options.password ?? DEMO_TICKETING_CREDENTIALS.password;
  const pageSize = options.pageSize ?? 100;
  const offsetLimit = options.offsetLimit === undefined ? 10_000 : options.offsetLimit;
  const rateLimit = options.rateLimit ?? { limit: 700, windowMs: 60_000 };
  const expectedAuth = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
  const faults = new Map<string, TicketingFault[]>();
  const requests: number[] = [];
  const log: FakeTicketingRequest[] = [];
  const hanging = new Set<ServerResponse>();
  let window = { start: 0, used: 0 };
  let inFlight = 0;
  let maxInFlight = 0;
  let baseUrl = '';

  /** Counts the request against the window: its X-Rate-Limit headers, and whether it is over the limit. */
  const countRequest = (): { headers: Record<string, string>; remaining: number; resetSeconds: number; over: boolean } => {
    const now = Date.now();
    if (now >= window.start + rateLimit.windowMs) window = { start: now, used: 0 };
    window.used += 1;
    const remaining = Math.max(0, rateLimit.limit - window.used);
    const resetSeconds = Math.max(1, Math.ceil((window.start + rateLimit.windowMs - now) / 1000));
    const headers = {
      'x-rate-limit': String(rateLimit.limit),
      'x-rate-limit-remaining': String(remaining),
      'ratelimit-limit': String(rateLimit.limit),
      'ratelimit-remaining': String(remaining),
      'ratelimit-reset': String(resetSeconds),
    };
    return { headers, remaining, resetSeconds, over: window.used > rateLimit.limit };
  };

  const answer = (request: IncomingMessage, response: ServerResponse, arrivedAt: number) => {
    const url = new URL(request.url ?? '/', baseUrl);
    const cursorSize = options.cursorPaging === false ? null : url.searchParams.get('page[size]');
    const pagination: FakePagination = cursorSize === null ? 'pages' : 'cursor';
    let page = 0;
    let remaining: number | undefined;
    let resetSeconds: number | undefined;
    const send = (status: number, body: string, headers: Record<string, string> = {}) => {
      response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
      response.end(body);
      log.push({ pagination, page, arrivedAt, answeredAt: Date.now(), status, remaining, resetSeconds });
    };
    if (request.method !== 'GET' || url.pathname !== '/api/v1/users.json') {
      send(404, '{"error":"InvalidEndpoint","description":"Not found"}');
      return;
    }
    // Where the page starts: its number, or the place after the cursor's user (by id, else by place).
    let start: number;
    let size = pageSize;
    if (pagination === 'cursor') {
      size = Number(cursorSize);
      const after = url.searchParams.get('page[after]');
      const cursor = after === null ? undefined : decodeCursor(after);
      if (
        !Number.isInteger(size) ||
        size < 1 ||
        size > MAX_CURSOR_PAGE_SIZE ||
        (after !== null && cursor === undefined) ||
        url.searchParams.has('page[before]')
      ) {
        send(400, '{"error":"InvalidPaginationParameter","description":"Invalid page parameters"}');
        return;
      }
      const found = cursor === undefined ? -1 : users.findIndex((user) => user.id === cursor.v);
      start = cursor === undefined ? 0 : found === -1 ? cursor.p + 1 : found + 1;
      page = Math.floor(start / size) + 1;
    } else {
      page = Number(url.searchParams.get('page') ?? '1');
      requests.push(page);
      start = (page - 1) * pageSize;
    }
    if (request.headers.authorization !== expectedAuth) {
      send(401, '{"error":"Couldn\'t authenticate you"}', { 'www-authenticate': 'Basic realm="Web Password"' });
      return;
    }
    const counted = countRequest();
    ({ remaining, resetSeconds } = counted);
    const fault = faults.get(`${pagination} ${page}`)?.shift();
    if (fault?.kind === 'status') {
      const numeric = fault.retryAfter !== undefined && /^\d+$/.test(fault.retryAfter);
      // A 429 as Zendesk sends it: nothing remains until the reset its Retry-After names.
      if (fault.status === 429 && numeric) ({ remaining, resetSeconds } = { remaining: 0, resetSeconds: Number(fault.retryAfter) });
      const rate =
        fault.status === 429 && numeric
          ? { ...counted.headers, 'x-rate-limit-remaining': '0', 'ratelimit-remaining': '0', 'ratelimit-reset': fault.retryAfter! }
          : counted.headers;
      send(fault.status, `{"error":"status ${fault.status}"}`, {
        ...rate,
        ...(fault.retryAfter === undefined ? {} : { 'retry-after': fault.retryAfter }),
      });
      return;
    }
    if (fault?.kind === 'garbage') {
      send(200, '<html>Service temporarily unavailable</html>');
      return;
    }
    if (fault?.kind === 'wrong-shape') {
      send(200, '{"people":[],"count":"many"}');
      return;
    }
    if (fault?.kind === 'hang') {
      hanging.add(response);
      return;
    }
    if (fault?.kind === 'redirect') {
      send(302, '', { location: fault.location });
      return;
    }
    if (counted.over) {
      send(429, '{"error":"APIRateLimitExceeded","description":"Number of allowed API requests per minute exceeded"}', {
        ...counted.headers,
        'retry-after': String(counted.resetSeconds),
      });
      return;
    }
    if (pagination === 'pages' && (!Number.isInteger(page) || page < 1)) {
      send(400, '{"error":"InvalidPageNumber"}', counted.headers);
      return;
    }
    if (pagination === 'pages' && offsetLimit !== null && page * pageSize > offsetLimit) {
      send(400, PAGINATION_DEPTH_BODY, counted.headers);
      return;
    }
    const slice = users.slice(start, start + size);
    const body = slice.map(userJson).join(',');
    if (pagination === 'cursor') {
      const more = start + size < users.length;
      const cursorOf = (index: number) => encodeCursor(users[index]!, index);
      const asked = url.searchParams.get('page[after]');
      const after =
        fault?.kind === 'stuck-cursor' && asked !== null ? asked : slice.length === 0 ? null : cursorOf(start + slice.length - 1);
      const before = slice.length === 0 ? null : cursorOf(start);
      const link = (name: 'after' | 'before', cursor: string | null) =>
        cursor === null
          ? null
          : `${options.nextPageBase ?? baseUrl}/api/v1/users.json?page%5B${name}%5D=${encodeURIComponent(cursor)}&page%5Bsize%5D=${size}`;
      const next = fault?.kind === 'repeat-cursor' ? `${baseUrl}${url.pathname}${url.search}` : link('after', after);
      const meta = { has_more: more || fault !== undefined, after_cursor: after, before_cursor: before };
      send(
        200,
        `{"users":[${body}],"meta":${JSON.stringify(meta)},"links":${JSON.stringify({ next, prev: link('before', before) })}}`,
        counted.headers,
      );
    } else {
      const last = page * pageSize >= users.length;
      const pageLink = (number: number) => JSON.stringify(`${options.nextPageBase ?? baseUrl}/api/v1/users.json?page=${number}`);
      const stated = options.statedCount ?? users.length;
      const count = options.omitCount || (options.countOnFirstPageOnly && page > 1) ? '' : `,"count":${stated}`;
      send(
        200,
        `{"users":[${body}],"next_page":${last ? 'null' : pageLink(page + 1)},"previous_page":${page === 1 ? 'null' : pageLink(page - 1)}${count}}`,
        counted.headers,
      );
    }
    options.afterPage?.(page, users);
  };

  const server = createServer((request, response) => {
    const arrivedAt = Date.now();
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    response.on('close', () => {
      inFlight -= 1;
      hanging.delete(response);
    });
    setTimeout(() => answer(request, response, arrivedAt), options.latencyMs ?? 5);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url: baseUrl,
    username,
    password,
    requests,
    log,
    failNext: (page, fault, pagination = 'pages') => {
      const key = `${pagination} ${page}`;
      faults.set(key, [...(faults.get(key) ?? []), fault]);
    },
    maxConcurrent: () => maxInFlight,
    close: async () => {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
};
