import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A ticketing system's user listing (`GET /api/v1/users.json?page=N`, HTTP basic auth, 100 users a
 * page) as a real HTTP server on loopback. Ids are decimal text so values above 2^53 go out exactly.
 * No vitest imports: scripts may use it as a demo destination.
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
  | { kind: 'redirect'; location: string };

export interface FakeTicketingOptions {
  users?: FakeTicketingUser[];
  username?: string;
  password?: string;
  pageSize?: number;
  /** Leave `count` out of every page so clients must follow `next_page`. */
  omitCount?: boolean;
  /** State `count` on page 1 only (some listings do). */
  countOnFirstPageOnly?: boolean;
  /** Base URL written into `next_page` links (default: this server). */
  nextPageBase?: string;
  /**
   * Called after each page is served, with the live user list, which it may change (a user deleted
   * or added at the destination while a client reads the listing shifts every later page).
   */
  afterPage?: (page: number, users: FakeTicketingUser[]) => void;
}

export interface FakeTicketing {
  url: string;
  username: string;
  password: string;
  /** Pages requested, in arrival order (authorized or not). */
  requests: number[];
  /** The next request for `page` gets `fault` instead of the page (queue several by calling again). */
  failNext: (page: number, fault: TicketingFault) => void;
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

export const startFakeTicketing = async (options: FakeTicketingOptions = {}): Promise<FakeTicketing> => {
  const users = [...(options.users ?? [])];
  const username = options.username ?? DEMO_TICKETING_CREDENTIALS.username;
  const password = options.password ?? DEMO_TICKETING_CREDENTIALS.password;
  const pageSize = options.pageSize ?? 100;
  const expectedAuth = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
  const faults = new Map<number, TicketingFault[]>();
  const requests: number[] = [];
  const hanging = new Set<ServerResponse>();
  let inFlight = 0;
  let maxInFlight = 0;
  let baseUrl = '';

  const send = (response: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) => {
    response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
    response.end(body);
  };

  const answer = (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? '/', baseUrl);
    if (request.method !== 'GET' || url.pathname !== '/api/v1/users.json') {
      send(response, 404, '{"error":"InvalidEndpoint","description":"Not found"}');
      return;
    }
    const page = Number(url.searchParams.get('page') ?? '1');
    requests.push(page);
    if (request.headers.authorization !== expectedAuth) {
      send(response, 401, '{"error":"Couldn\'t authenticate you"}', { 'www-authenticate': 'Basic realm="Web Password"' });
      return;
    }
    const fault = faults.get(page)?.shift();
    if (fault?.kind === 'status') {
      send(response, fault.status, `{"error":"status ${fault.status}"}`, fault.retryAfter === undefined ? {} : { 'retry-after': fault.retryAfter });
      return;
    }
    if (fault?.kind === 'garbage') {
      send(response, 200, '<html>Service temporarily unavailable</html>');
      return;
    }
    if (fault?.kind === 'wrong-shape') {
      send(response, 200, '{"people":[],"count":"many"}');
      return;
    }
    if (fault?.kind === 'hang') {
      hanging.add(response);
      return;
    }
    if (fault?.kind === 'redirect') {
      send(response, 302, '', { location: fault.location });
      return;
    }
    if (!Number.isInteger(page) || page < 1) {
      send(response, 400, '{"error":"InvalidPageNumber"}');
      return;
    }
    const slice = users.slice((page - 1) * pageSize, page * pageSize);
    const last = page * pageSize >= users.length;
    const nextPage = last ? 'null' : JSON.stringify(`${options.nextPageBase ?? baseUrl}/api/v1/users.json?page=${page + 1}`);
    const count = options.omitCount || (options.countOnFirstPageOnly && page > 1) ? '' : `,"count":${users.length}`;
    send(response, 200, `{"users":[${slice.map(userJson).join(',')}],"next_page":${nextPage},"previous_page":null${count}}`);
    options.afterPage?.(page, users);
  };

  const server = createServer((request, response) => {
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    response.on('close', () => {
      inFlight -= 1;
      hanging.delete(response);
    });
    // A small delay so concurrent page reads actually overlap.
    setTimeout(() => answer(request, response), 5);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url: baseUrl,
    username,
    password,
    requests,
    failNext: (page, fault) => {
      faults.set(page, [...(faults.get(page) ?? []), fault]);
    },
    maxConcurrent: () => maxInFlight,
    close: async () => {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
};
