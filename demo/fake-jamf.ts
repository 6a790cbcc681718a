import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateJamfComputers, type JamfComputer } from './jamf-computers.ts';
import { generateJamfMobileDevices, type JamfMobileDevice } from './jamf-mobile-devices.ts';

export { generateJamfComputers, generateJamfMobileDevices, type JamfComputer, type JamfMobileDevice };

/**
 * A Jamf Pro API on 127.0.0.1 speaking the real wire format: both token endpoints, the computers
 * inventory with paging, sorting, sections, an RSQL filter on dates and bearer tokens, and the
 * mobile devices' inventory (`/api/v2/mobile-devices/detail`, paged, sorted and filtered the same
 * way), as a current Jamf Pro or an older one (`JAMF_PERSONALITIES`), plus fault and latency
 * controls and request and byte counts for tests and benchmarks.
 * No test-framework imports: `npm start` uses it as the demo inventory.
 */

/**
 * Which Jamf Pro the fake is. Each answers only its own paths (any other is a 404 in Jamf's error
 * shape); basic auth is `/api/v1/auth/token` in both.
 */
export const JAMF_PERSONALITIES = {
  current: { versions: 'Jamf Pro 11.30 and later', oauthToken: '/api/v1/oauth/token', inventory: '/api/v4/computers-inventory' },
  legacy: { versions: 'Jamf Pro before 11.30', oauthToken: '/api/oauth/token', inventory: '/api/v3/computers-inventory' },
} as const;
export type JamfPersonality = keyof typeof JAMF_PERSONALITIES;
const BASIC_TOKEN_PATH = '/api/v1/auth/token';
/** The mobile devices' inventory: the same path in both personalities. */
export const MOBILE_INVENTORY_PATH = '/api/v2/mobile-devices/detail';

/**
 * What one inventory (or token) request gets instead of a normal answer. The transient ones a
 * client retries: `status` 500/502/503/504 (Jamf's error body, or a load balancer's HTML page with
 * `gateway`), `rate-limited` (with `Retry-After` and/or Jamf's platform gateway's
 * `x-ratelimit-reset`), `drop` (the connection cut mid-answer), and `delay` past the client's
 * timeout (a slow page).
 */
export type JamfFault =
  | { kind: 'status'; status: number; body?: string; gateway?: boolean }
  | { kind: 'unauthorized' }
  | { kind: 'rate-limited'; retryAfter?: string; rateLimitReset?: string }
  /** The status line, headers and part of the body, then the socket destroyed. */
  | { kind: 'drop' }
  /** A 200 of `bytes` bytes streamed without a Content-Length (or, with `declared`, announced by one and never sent). */
  | { kind: 'oversize'; bytes: number; declared?: boolean }
  | { kind: 'malformed' }
  | { kind: 'wrong-shape' }
  | { kind: 'delay'; ms: number }
  /** A 200 page holding only its first `keep` records, totalCount unchanged (a page upstream cut short). */
  | { kind: 'short'; keep: number }
  /** An error page repeating the request, headers and body (as some proxies and debug builds do). */
  | { kind: 'echo'; status: number }
  /** A token endpoint's 200 whose token holds a line feed (a broken upstream; no header can carry it). */
  | { kind: 'unusable-token' }
  | { kind: 'hang' };

export interface FakeJamfOptions {
  /** Default `current`. */
  personality?: JamfPersonality;
  /**
   * The inventory; default `generateJamfComputers(120, 1)`. Served as given (duplicates included),
   * each `general` in the personality's shape (`generalAs`).
   */
  devices?: readonly JamfComputer[];
  /** The mobile devices' inventory; default none (a Jamf Pro without mobile devices). */
  mobileDevices?: readonly JamfMobileDevice[];
  /** OAuth API client; default DEMO_JAMF_CREDENTIALS. */
  clientId?: string;
  clientSecret?: string;
  /** Basic → bearer; unset: the basic token endpoint refuses everyone. */
  username?: string;
  password?: string;
  /** Added before every answer (token and inventory). */
  latencyMs?: number;
  /**
   * How long each inventory page (of either inventory) takes from its request to its answer, by its
   * size, as a real Jamf Pro builds larger pages longer (e.g. 300 ms + 1.5 ms per record of the four
   * sections); the fake's own work on the page is within it.
   */
  pageDelay?: { baseMs: number; perRecordMs: number };
  /** Jamf clamps larger page sizes silently; default 2000. */
  maxPageSize?: number;
  /** The fields the inventory's `filter` accepts (others: 400); default the personality's dates. */
  filterFields?: readonly string[];
  /** The fields the mobile inventory's `filter` accepts (others: 400); default its inventory date. */
  mobileFilterFields?: readonly string[];
  /** Each token is good for this many inventory requests, then 401 INVALID_TOKEN. Default unlimited. */
  tokenMaxUses?: number;
  /** Serve records in the order given instead of sorting by numeric id (a misbehaving upstream). */
  ignoreSort?: boolean;
  /** Faults by inventory page number; each applies `times` times (default: every time). */
  pageFaults?: Record<number, JamfFault & { times?: number }>;
  /** Faults by mobile inventory page number, as `pageFaults`. */
  mobilePageFaults?: Record<number, JamfFault & { times?: number }>;
  /** A fault for both token endpoints of the personality. */
  tokenFault?: JamfFault & { times?: number };
  /** Called as each inventory request arrives (1-based count), before it is answered. */
  beforeInventoryRequest?: (requestNumber: number) => void;
  /** Default 0 (a free port). */
  port?: number;
}

export interface InventoryRequestRecord {
  /** The raw query string, without `?`. */
  query: string;
  page: number;
  pageSize: number;
  sections: string[];
  sort: string | null;
  /** The `filter` parameter as decoded, or null. */
  filter: string | null;
  authorized: boolean;
  /** When it arrived (ms, `Date.now`): how far apart a client's retries came. */
  at: number;
}

export interface FakeJamfStats {
  /** Requests to the personality's token endpoints (OAuth and basic). */
  tokenRequests: number;
  /** Requests to the personality's inventory. */
  inventoryRequests: number;
  /** Every request by method and path (`GET /api/v4/computers-inventory`), 404s included. */
  requests: Record<string, number>;
  /** Inventory requests answered 401 because of the token. */
  rejectedTokens: number;
  maxConcurrentInventory: number;
  inventoryLog: InventoryRequestRecord[];
  /** Requests to the mobile devices' inventory, and their log (kept apart from the computers'). */
  mobileRequests: number;
  mobileLog: InventoryRequestRecord[];
  /** Bytes of every response body sent (token and error answers included). */
  bytesSent: number;
  /** The same by method and path, as `requests`. */
  bytesByRoute: Record<string, number>;
}

export interface FakeJamf {
  url: string;
  personality: JamfPersonality;
  stats: () => FakeJamfStats;
  resetStats: () => void;
  /** Every token issued so far becomes invalid (401 INVALID_TOKEN); new ones work. */
  invalidateTokens: () => void;
  /** Invalidates every token just before the n-th inventory request (1-based, counted from now). */
  invalidateTokensAtRequest: (n: number) => void;
  setPageFault: (page: number, fault: (JamfFault & { times?: number }) | undefined) => void;
  setMobilePageFault: (page: number, fault: (JamfFault & { times?: number }) | undefined) => void;
  setTokenFault: (fault: (JamfFault & { times?: number }) | undefined) => void;
  setDevices: (devices: readonly JamfComputer[]) => void;
  setMobileDevices: (devices: readonly JamfMobileDevice[]) => void;
  setLatencyMs: (ms: number) => void;
  close: () => Promise<void>;
}

/** The demo inventory's OAuth client, for `npm start` and the sample configuration. */
export const DEMO_JAMF_CREDENTIALS = { clientId: 'demo-client', clientSecret: 'demo-secret-value' } as const;

const DEFAULT_MAX_PAGE_SIZE = 2000;
const ALL_SECTIONS = {
  GENERAL: 'general',
  HARDWARE: 'hardware',
  OPERATING_SYSTEM: 'operatingSystem',
  USER_AND_LOCATION: 'userAndLocation',
  DISK_ENCRYPTION: 'diskEncryption',
  PURCHASING: 'purchasing',
} as const;
const MOBILE_SECTIONS = {
  GENERAL: 'general',
  HARDWARE: 'hardware',
  USER_AND_LOCATION: 'userAndLocation',
  SECURITY: 'security',
  PURCHASING: 'purchasing',
} as const;

/**
 * A `general` section as the personality's inventory writes it: v4 has `lastCheckIn` and
 * `lastContact` where v3 had `lastContactTime`. Sections already in the right shape stay as given.
 */
export const generalAs = (personality: JamfPersonality, general: unknown): unknown => {
  if (typeof general !== 'object' || general === null || Array.isArray(general)) return general;
  const fields = general as Record<string, unknown>;
  if (personality === 'current') {
    if (!('lastContactTime' in fields)) return general;
    // The binary's check-in taken as the last contact: the record has one time for both.
    const { lastContactTime, ...rest } = fields;
    return { lastCheckIn: lastContactTime, lastContact: lastContactTime, ...rest };
  }
  if (!('lastContact' in fields) && !('lastCheckIn' in fields)) return general;
  const { lastContact, lastCheckIn: _lastCheckIn, ...rest } = fields;
  return { ...('lastContact' in fields ? { lastContactTime: lastContact } : {}), ...rest };
};

/**
 * `record` with a change dated as Jamf dates it: its last contact (`lastContactTime` where its
 * `general` is in the v3 shape) or its inventory report set to `at`, an ISO 8601 instant.
 */
export const datedJamfComputer = (record: JamfComputer, field: 'lastContact' | 'reportDate', at: string): JamfComputer => {
  const general = typeof record.general === 'object' && record.general !== null ? (record.general as Record<string, unknown>) : {};
  const key = field === 'reportDate' ? 'reportDate' : 'lastContactTime' in general ? 'lastContactTime' : 'lastContact';
  return { ...record, general: { ...general, [key]: at } };
};

/** `record` with its last inventory update dated `at` (an ISO 8601 instant), as Jamf dates a mobile device's change. */
export const datedJamfMobileDevice = (record: JamfMobileDevice, at: string): JamfMobileDevice => {
  const general = typeof record.general === 'object' && record.general !== null ? (record.general as Record<string, unknown>) : {};
  return { ...record, general: { ...general, lastInventoryUpdateDate: at } };
};

/** The dates each version filters the inventory on (RSQL), by their names in its `general`. */
const FILTER_FIELDS: Record<JamfPersonality, readonly string[]> = {
  current: ['general.lastContact', 'general.lastCheckIn', 'general.reportDate'],
  legacy: ['general.lastContactTime', 'general.reportDate'],
};
/** The date the mobile inventory filters on, in both versions. */
const MOBILE_FILTER_FIELDS: readonly string[] = ['general.lastInventoryUpdateDate'];
const COMPARISONS: Record<string, (value: number, argument: number) => boolean> = {
  '=ge=': (value, argument) => value >= argument,
  '=gt=': (value, argument) => value > argument,
  '=le=': (value, argument) => value <= argument,
  '=lt=': (value, argument) => value < argument,
};
const COMPARISON = /^(\w+(?:\.\w+)*)(=[gl][et]=)(["']?)(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2}))\3$/;

/**
 * An RSQL filter of date comparisons joined by `,` (or) as a test of a record (its `general` as
 * `generalOf` gives it), or the 400 body Jamf answers an unknown field or a filter it cannot read with.
 */
const parseFilter = <R>(
  fields: readonly string[],
  filter: string,
  generalOf: (record: R) => unknown,
): { matches: (record: R) => boolean } | { refused: string } => {
  const tests: ((general: Record<string, unknown>) => boolean)[] = [];
  for (const part of filter.split(',')) {
    const parsed = COMPARISON.exec(part);
    if (parsed === null) return { refused: jamfError(400, 'INVALID_FILTER', `Invalid RSQL filter: ${filter}`, 'filter') };
    const [, field, operator, , argument] = parsed as unknown as [string, string, string, string, string];
    if (!fields.includes(field)) {
      const description = `Cannot filter by field [${field}]. Fields that can be used in filtering results of this endpoint: [${fields.join(', ')}]`;
      return { refused: jamfError(400, 'INVALID_FIELD', description, 'filter') };
    }
    const at = Date.parse(argument);
    const key = field.slice('general.'.length);
    tests.push((general) => {
      const value = typeof general[key] === 'string' ? Date.parse(general[key]) : Number.NaN;
      return !Number.isNaN(value) && COMPARISONS[operator]!(value, at);
    });
  }
  return {
    matches: (record) => {
      const general = generalOf(record);
      return typeof general === 'object' && general !== null && tests.some((test) => test(general as Record<string, unknown>));
    },
  };
};

const jamfError = (status: number, code: string, description: string, field: string | null = null): string =>
  JSON.stringify({ httpStatus: status, errors: [{ code, description, id: '0', field }] });

/** The code and description Jamf Pro's error body carries for each server-side status. */
const SERVER_ERRORS: Readonly<Record<number, [string, string]>> = {
  500: ['INTERNAL_ERROR', 'Internal Server Error'],
  502: ['BAD_GATEWAY', 'Bad Gateway'],
  503: ['SERVICE_UNAVAILABLE', 'Service Unavailable'],
  504: ['GATEWAY_TIMEOUT', 'Gateway Timeout'],
};

/** A load balancer's own error page, as one in front of Jamf Cloud answers when the server behind it fails. */
const gatewayPage = (status: number): string => {
  const title = `${status} ${SERVER_ERRORS[status]?.[1] ?? 'Error'}`;
  return `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n</body>\r\n</html>\r\n`;
};

/** Streams `bytes` bytes of a JSON page's padding, a chunk at a time, until done or the client goes. */
const streamOversize = async (response: ServerResponse, bytes: number): Promise<void> => {
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  response.write('{"totalCount":1,"results":[],"padding":"');
  // Bounded by `bytes`; stops early when the client cancels (the socket closes).
  for (let sent = 0; sent < bytes && !response.destroyed; sent += chunk.length) {
    if (response.write(chunk)) continue;
    await new Promise<void>((resolve) => {
      const done = () => {
        response.off('drain', done).off('close', done);
        resolve();
      };
      response.once('drain', done).once('close', done);
    });
  }
  if (!response.destroyed) response.end('"}');
};

const readBody = async (request: IncomingMessage): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

// Numeric order on digit strings (each inventory's id field); a record a test gave no id sorts first.
const compareIdsBy =
  (field: string) =>
  (a: Record<string, unknown>, b: Record<string, unknown>): number => {
    const left = String(a[field] ?? '');
    const right = String(b[field] ?? '');
    return left.length === right.length ? (left < right ? -1 : left > right ? 1 : 0) : left.length - right.length;
  };
const compareIds = compareIdsBy('id');
const compareMobileIds = compareIdsBy('mobileDeviceId');

/**
 * The records the last filter matched, in id order: a filtered read asks for several pages of one
 * filter, which are not matched again while the filter and the inventory stay the same.
 */
const makeFilterCache = <R>() => {
  let last: { filter: string; ordered: readonly R[]; records: R[] } | undefined;
  return (filter: string, ordered: readonly R[], matches: (record: R) => boolean): R[] => {
    if (last?.filter !== filter || last.ordered !== ordered) last = { filter, ordered, records: ordered.filter(matches) };
    return last.records;
  };
};

export const startFakeJamf = async (options: FakeJamfOptions = {}): Promise<FakeJamf> => {
  const personality = options.personality ?? 'current';
  const paths = JAMF_PERSONALITIES[personality];
  let devices: readonly JamfComputer[] = options.devices ?? generateJamfComputers(120, 1);
  let sorted: JamfComputer[] | undefined;
  let latencyMs = options.latencyMs ?? 0;
  const clientId = options.clientId ?? DEMO_JAMF_CREDENTIALS.clientId;
  const clientSecret = options.clientSecret ?? DEMO_JAMF_CREDENTIALS.clientSecret;
  const maxPageSize = options.maxPageSize ?? DEFAULT_MAX_PAGE_SIZE;
  const pageFaults = new Map<number, JamfFault & { times?: number }>(
    Object.entries(options.pageFaults ?? {}).map(([page, fault]) => [Number(page), { ...fault }]),
  );
  const mobilePageFaults = new Map<number, JamfFault & { times?: number }>(
    Object.entries(options.mobilePageFaults ?? {}).map(([page, fault]) => [Number(page), { ...fault }]),
  );
  let mobileDevices: readonly JamfMobileDevice[] = options.mobileDevices ?? [];
  let sortedMobile: JamfMobileDevice[] | undefined;
  let tokenFault = options.tokenFault ? { ...options.tokenFault } : undefined;
  const tokens = new Map<string, { uses: number }>();
  let invalidateAt: number | undefined;
  let active = 0;
  const emptyStats = (): FakeJamfStats => ({
    tokenRequests: 0,
    inventoryRequests: 0,
    requests: {},
    rejectedTokens: 0,
    maxConcurrentInventory: 0,
    inventoryLog: [],
    mobileRequests: 0,
    mobileLog: [],
    bytesSent: 0,
    bytesByRoute: {},
  });
  const filtered = makeFilterCache<JamfComputer>();
  const filteredMobile = makeFilterCache<JamfMobileDevice>();
  let stats = emptyStats();
  const timers = new Set<NodeJS.Timeout>();

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (ms <= 0) return resolve();
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });

  const routes = new WeakMap<ServerResponse, string>();
  const send = (response: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) => {
    response.writeHead(status, { 'Content-Type': 'application/json', ...headers });
    const bytes = Buffer.byteLength(body);
    const route = routes.get(response) ?? '';
    stats.bytesSent += bytes;
    stats.bytesByRoute[route] = (stats.bytesByRoute[route] ?? 0) + bytes;
    response.end(body);
  };

  /** Applies a fault if one is due; true when the response was handled (or deliberately never will be). */
  const applyFault = async (
    fault: (JamfFault & { times?: number }) | undefined,
    request: IncomingMessage,
    response: ServerResponse,
    normalPage?: () => { totalCount: number; results: unknown[] },
  ): Promise<boolean> => {
    if (fault === undefined || fault.times === 0) return false;
    if (fault.times !== undefined) fault.times -= 1;
    switch (fault.kind) {
      case 'status': {
        if (fault.gateway) {
          send(response, fault.status, fault.body ?? gatewayPage(fault.status), { 'Content-Type': 'text/html' });
          return true;
        }
        const [code, description] = SERVER_ERRORS[fault.status] ?? SERVER_ERRORS[500]!;
        send(response, fault.status, fault.body ?? jamfError(fault.status, code, description));
        return true;
      }
      case 'drop': {
        // Headers and a first part of a page, then the connection is gone: a reset mid-answer.
        response.writeHead(200, { 'Content-Type': 'application/json' });
        response.write('{"totalCount":');
        setImmediate(() => response.socket?.destroy());
        return true;
      }
      case 'oversize':
        if (fault.declared) {
          response.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': String(fault.bytes) });
          response.write('{"totalCount":');
          return true;
        }
        response.writeHead(200, { 'Content-Type': 'application/json' });
        await streamOversize(response, fault.bytes);
        return true;
      case 'unauthorized':
        send(response, 401, jamfError(401, 'INVALID_TOKEN', 'Unauthorized'));
        return true;
      case 'rate-limited':
        send(response, 429, jamfError(429, 'TOO_MANY_REQUESTS', 'Too Many Requests'), {
          ...(fault.retryAfter === undefined ? {} : { 'Retry-After': fault.retryAfter }),
          ...(fault.rateLimitReset === undefined ? {} : { 'x-ratelimit-reset': fault.rateLimitReset }),
        });
        return true;
      case 'malformed':
        send(response, 200, '{"totalCount": 12, "results": [{"id": "1", "general": {');
        return true;
      case 'wrong-shape':
        send(response, 200, JSON.stringify({ totalCount: 'many', results: { id: '1' } }));
        return true;
      case 'delay':
        await sleep(fault.ms);
        return false;
      case 'short': {
        const page = normalPage?.() ?? { totalCount: 0, results: [] };
        send(response, 200, JSON.stringify({ totalCount: page.totalCount, results: page.results.slice(0, fault.keep) }));
        return true;
      }
      case 'echo': {
        // The request first, as such pages print it: within any excerpt a log might keep.
        const repeated = { headers: request.headers, body: await readBody(request), method: request.method, url: request.url };
        send(
          response,
          fault.status,
          JSON.stringify({
            request: repeated,
            httpStatus: fault.status,
            errors: [{ code: 'INTERNAL_ERROR', description: 'Internal Server Error' }],
          }),
        );
        return true;
      }
      case 'unusable-token':
        send(response, 200, JSON.stringify({ access_token: `${issueToken()}\nx`, token: `${issueToken()}\nx`, expires_in: 299 }));
        return true;
      case 'hang':
        return true;
    }
  };

  const issueToken = (): string => {
    const token = `fake-jamf-token-${randomUUID()}`;
    tokens.set(token, { uses: 0 });
    return token;
  };

  const oauthToken = async (request: IncomingMessage, response: ServerResponse) => {
    const form = new URLSearchParams(await readBody(request));
    const formContentType = (request.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded');
    if (!formContentType || form.get('grant_type') !== 'client_credentials') {
      return send(response, 400, JSON.stringify({ error: 'unsupported_grant_type' }));
    }
    if (form.get('client_id') !== clientId || form.get('client_secret') !== clientSecret) {
      return send(response, 401, jamfError(401, 'INVALID_CLIENT', 'Client authentication failed'));
    }
    send(response, 200, JSON.stringify({ access_token: issueToken(), scope: 'api-role:1', token_type: 'Bearer', expires_in: 299 }));
  };

  const basicToken = (request: IncomingMessage, response: ServerResponse) => {
    const header = request.headers.authorization ?? '';
    const decoded = header.startsWith('Basic ') ? Buffer.from(header.slice(6), 'base64').toString('utf8') : '';
    const separator = decoded.indexOf(':');
    const valid =
      options.username !== undefined &&
      separator > 0 &&
      decoded.slice(0, separator) === options.username &&
      decoded.slice(separator + 1) === options.password;
    if (!valid) return send(response, 401, jamfError(401, 'INVALID_CREDENTIALS', 'Unauthorized'));
    send(response, 200, JSON.stringify({ token: issueToken(), expires: new Date(Date.now() + 20 * 60_000).toISOString() }));
  };

  /**
   * What both inventories' pages start with: the paging, sections and filter asked for, logged in
   * `log`, and the bearer token, used once; undefined once a 401 is sent for a token Jamf would refuse.
   */
  const pagedRequest = (url: URL, request: IncomingMessage, response: ServerResponse, log: InventoryRequestRecord[]) => {
    const page = Number(url.searchParams.get('page') ?? '0');
    const requestedSize = Number(url.searchParams.get('page-size') ?? '100');
    const pageSize = Math.min(Math.max(1, requestedSize), maxPageSize);
    const header = request.headers.authorization ?? '';
    const token = header.startsWith('Bearer ') ? tokens.get(header.slice(7)) : undefined;
    const authorized = token !== undefined && (options.tokenMaxUses === undefined || token.uses < options.tokenMaxUses);
    const sections = url.searchParams.getAll('section');
    const filter = url.searchParams.get('filter');
    log.push({
      query: url.search.slice(1),
      page,
      pageSize: requestedSize,
      sections,
      sort: url.searchParams.get('sort'),
      filter,
      authorized,
      at: Date.now(),
    });
    if (!authorized) {
      stats.rejectedTokens += 1;
      send(response, 401, jamfError(401, 'INVALID_TOKEN', 'Unauthorized'));
      return undefined;
    }
    token.uses += 1;
    return { page, pageSize, sections, filter };
  };

  /**
   * A page's answer once `pageDelay` has passed since the request arrived: the delay is the whole time
   * the modelled Jamf takes, so the fake's own work on the page (filtering, shaping and serializing
   * 100,000 records in this process) is part of it, not added to it.
   */
  const sendPage = async (response: ServerResponse, body: { results: unknown[] }, startedAt: number): Promise<void> => {
    const json = JSON.stringify(body);
    if (options.pageDelay) {
      const modelled = options.pageDelay.baseMs + options.pageDelay.perRecordMs * body.results.length;
      await sleep(Math.max(0, modelled - (performance.now() - startedAt)));
    }
    send(response, 200, json);
  };

  const inventory = async (url: URL, request: IncomingMessage, response: ServerResponse) => {
    const startedAt = performance.now();
    stats.inventoryRequests += 1;
    options.beforeInventoryRequest?.(stats.inventoryRequests);
    if (invalidateAt !== undefined && stats.inventoryRequests >= invalidateAt) {
      tokens.clear();
      invalidateAt = undefined;
    }
    const paged = pagedRequest(url, request, response, stats.inventoryLog);
    if (paged === undefined) return;
    const { page, pageSize, sections, filter } = paged;
    const parsedFilter =
      filter === null
        ? undefined
        : parseFilter<JamfComputer>(options.filterFields ?? FILTER_FIELDS[personality], filter, (record) =>
            generalAs(personality, record.general),
          );
    if (parsedFilter !== undefined && 'refused' in parsedFilter) return send(response, 400, parsedFilter.refused);
    const normalPage = () => {
      const all = options.ignoreSort || url.searchParams.get('sort') !== 'id:asc' ? devices : (sorted ??= [...devices].sort(compareIds));
      const ordered = parsedFilter === undefined ? all : filtered(filter!, all, parsedFilter.matches);
      const wanted = new Set(sections.map((section) => ALL_SECTIONS[section as keyof typeof ALL_SECTIONS]).filter(Boolean));
      const results = ordered.slice(page * pageSize, page * pageSize + pageSize).map((record) => {
        const shaped: Record<string, unknown> = { ...record };
        if ('general' in record) shaped.general = generalAs(personality, record.general);
        // Unrequested sections come back null, as Jamf does; a requested one the record lacks stays absent.
        for (const key of Object.values(ALL_SECTIONS)) if (!wanted.has(key)) shaped[key] = null;
        return shaped;
      });
      return { totalCount: ordered.length, results };
    };
    if (await applyFault(pageFaults.get(page), request, response, normalPage)) return;
    await sendPage(response, normalPage(), startedAt);
  };

  /** The mobile devices' inventory: the same tokens, paging, sorting, sections, filter, page delay and page faults. */
  const mobileInventory = async (url: URL, request: IncomingMessage, response: ServerResponse) => {
    const startedAt = performance.now();
    stats.mobileRequests += 1;
    const paged = pagedRequest(url, request, response, stats.mobileLog);
    if (paged === undefined) return;
    const { page, pageSize, sections, filter } = paged;
    const parsedFilter =
      filter === null
        ? undefined
        : parseFilter<JamfMobileDevice>(options.mobileFilterFields ?? MOBILE_FILTER_FIELDS, filter, (record) => record.general);
    if (parsedFilter !== undefined && 'refused' in parsedFilter) return send(response, 400, parsedFilter.refused);
    const normalPage = () => {
      const all =
        options.ignoreSort || url.searchParams.get('sort') !== 'mobileDeviceId:asc'
          ? mobileDevices
          : (sortedMobile ??= [...mobileDevices].sort(compareMobileIds));
      const ordered = parsedFilter === undefined ? all : filteredMobile(filter!, all, parsedFilter.matches);
      const wanted = new Set(sections.map((section) => MOBILE_SECTIONS[section as keyof typeof MOBILE_SECTIONS]).filter(Boolean));
      const results = ordered.slice(page * pageSize, page * pageSize + pageSize).map((record) => {
        const shaped: Record<string, unknown> = { ...record };
        // As on computers: an unrequested section comes back null, a requested one the record lacks stays absent.
        for (const key of Object.values(MOBILE_SECTIONS)) if (!wanted.has(key)) shaped[key] = null;
        return shaped;
      });
      return { totalCount: ordered.length, results };
    };
    if (await applyFault(mobilePageFaults.get(page), request, response, normalPage)) return;
    await sendPage(response, normalPage(), startedAt);
  };

  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const route = `${request.method} ${url.pathname}`;
    stats.requests[route] = (stats.requests[route] ?? 0) + 1;
    routes.set(response, route);
    const isInventory = route === `GET ${paths.inventory}`;
    const isOauthToken = route === `POST ${paths.oauthToken}`;
    if (isInventory) {
      active += 1;
      stats.maxConcurrentInventory = Math.max(stats.maxConcurrentInventory, active);
      response.once('close', () => (active -= 1));
    }
    void (async () => {
      await sleep(latencyMs);
      if (isOauthToken || route === `POST ${BASIC_TOKEN_PATH}`) {
        stats.tokenRequests += 1;
        if (await applyFault(tokenFault, request, response)) return;
        return isOauthToken ? oauthToken(request, response) : basicToken(request, response);
      }
      if (isInventory) return inventory(url, request, response);
      if (route === `GET ${MOBILE_INVENTORY_PATH}`) return mobileInventory(url, request, response);
      send(response, 404, jamfError(404, 'NOT_FOUND', 'Not Found'));
    })().catch((error: unknown) => {
      if (!response.headersSent) send(response, 500, jamfError(500, 'INTERNAL_ERROR', String(error)));
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    personality,
    stats: () => ({
      ...stats,
      requests: { ...stats.requests },
      bytesByRoute: { ...stats.bytesByRoute },
      inventoryLog: [...stats.inventoryLog],
      mobileLog: [...stats.mobileLog],
    }),
    resetStats: () => {
      stats = emptyStats();
    },
    invalidateTokens: () => tokens.clear(),
    invalidateTokensAtRequest: (n) => {
      invalidateAt = stats.inventoryRequests + n;
    },
    setPageFault: (page, fault) => {
      if (fault === undefined) pageFaults.delete(page);
      else pageFaults.set(page, { ...fault });
    },
    setMobilePageFault: (page, fault) => {
      if (fault === undefined) mobilePageFaults.delete(page);
      else mobilePageFaults.set(page, { ...fault });
    },
    setTokenFault: (fault) => {
      tokenFault = fault === undefined ? undefined : { ...fault };
    },
    setDevices: (next) => {
      devices = next;
      sorted = undefined;
    },
    setMobileDevices: (next) => {
      mobileDevices = next;
      sortedMobile = undefined;
    },
    setLatencyMs: (ms) => {
      latencyMs = ms;
    },
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};
