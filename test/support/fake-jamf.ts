import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A Jamf Pro API on 127.0.0.1 speaking the real wire format (CONTRACT §2): both token endpoints,
 * `/api/v3/computers-inventory` with paging, sorting, sections and bearer tokens, plus fault and
 * latency controls for tests and benchmarks. No test-framework imports: `npm start` uses it as the
 * demo inventory.
 */

/** A computers-inventory record in the Jamf Pro API v3 shape (only the parts this service reads are typed). */
export type JamfComputer = Record<string, unknown> & { id: string };

/** What one inventory (or token) request gets instead of a normal answer. */
export type JamfFault =
  | { kind: 'status'; status: number; body?: string }
  | { kind: 'unauthorized' }
  | { kind: 'rate-limited'; retryAfter?: string }
  | { kind: 'malformed' }
  | { kind: 'wrong-shape' }
  | { kind: 'delay'; ms: number }
  | { kind: 'hang' };

export interface FakeJamfOptions {
  /** The inventory; default `generateJamfComputers(120, 1)`. Served as given (duplicates included). */
  devices?: readonly JamfComputer[];
  /** OAuth API client; default DEMO_JAMF_CREDENTIALS. */
  clientId?: string;
  clientSecret?: string;
  /** Basic → bearer; unset: the basic token endpoint refuses everyone. */
  username?: string;
  password?: string;
  /** Added before every answer (token and inventory). */
  latencyMs?: number;
  /** Jamf clamps larger page sizes silently; default 2000. */
  maxPageSize?: number;
  /** Each token is good for this many inventory requests, then 401 INVALID_TOKEN. Default unlimited. */
  tokenMaxUses?: number;
  /** Serve records in the order given instead of sorting by numeric id (a misbehaving upstream). */
  ignoreSort?: boolean;
  /** Faults by inventory page number; each applies `times` times (default: every time). */
  pageFaults?: Record<number, JamfFault & { times?: number }>;
  /** A fault for both token endpoints. */
  tokenFault?: JamfFault & { times?: number };
  /** Called as each inventory request arrives (1-based count), before it is answered. */
  beforeInventoryRequest?: (requestNumber: number) => void;
  /** Default 0 (a free port). */
  port?: number;
}

export interface InventoryRequestRecord {
  page: number;
  pageSize: number;
  sections: string[];
  sort: string | null;
  authorized: boolean;
}

export interface FakeJamfStats {
  tokenRequests: number;
  inventoryRequests: number;
  /** Inventory requests answered 401 because of the token. */
  rejectedTokens: number;
  maxConcurrentInventory: number;
  inventoryLog: InventoryRequestRecord[];
}

export interface FakeJamf {
  url: string;
  stats: () => FakeJamfStats;
  resetStats: () => void;
  /** Every token issued so far becomes invalid (401 INVALID_TOKEN); new ones work. */
  invalidateTokens: () => void;
  /** Invalidates every token just before the n-th inventory request (1-based, counted from now). */
  invalidateTokensAtRequest: (n: number) => void;
  setPageFault: (page: number, fault: (JamfFault & { times?: number }) | undefined) => void;
  setTokenFault: (fault: (JamfFault & { times?: number }) | undefined) => void;
  setDevices: (devices: readonly JamfComputer[]) => void;
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

const jamfError = (status: number, code: string, description: string): string =>
  JSON.stringify({ httpStatus: status, errors: [{ code, description, id: '0', field: null }] });

const readBody = async (request: IncomingMessage): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

// Numeric order on digit strings; a record a test gave no id sorts first.
const compareIds = (a: JamfComputer, b: JamfComputer): number => {
  const left = String(a.id ?? '');
  const right = String(b.id ?? '');
  return left.length === right.length ? (left < right ? -1 : left > right ? 1 : 0) : left.length - right.length;
};

export const startFakeJamf = async (options: FakeJamfOptions = {}): Promise<FakeJamf> => {
  let devices: readonly JamfComputer[] = options.devices ?? generateJamfComputers(120, 1);
  let sorted: JamfComputer[] | undefined;
  let latencyMs = options.latencyMs ?? 0;
  const clientId = options.clientId ?? DEMO_JAMF_CREDENTIALS.clientId;
  const clientSecret = options.clientSecret ?? DEMO_JAMF_CREDENTIALS.clientSecret;
  const maxPageSize = options.maxPageSize ?? DEFAULT_MAX_PAGE_SIZE;
  const pageFaults = new Map<number, JamfFault & { times?: number }>(
    Object.entries(options.pageFaults ?? {}).map(([page, fault]) => [Number(page), { ...fault }]),
  );
  let tokenFault = options.tokenFault ? { ...options.tokenFault } : undefined;
  const tokens = new Map<string, { uses: number }>();
  let invalidateAt: number | undefined;
  let active = 0;
  let stats: FakeJamfStats = { tokenRequests: 0, inventoryRequests: 0, rejectedTokens: 0, maxConcurrentInventory: 0, inventoryLog: [] };
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

  const send = (response: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) => {
    response.writeHead(status, { 'Content-Type': 'application/json', ...headers });
    response.end(body);
  };

  /** Applies a fault if one is due; true when the response was handled (or deliberately never will be). */
  const applyFault = async (fault: (JamfFault & { times?: number }) | undefined, response: ServerResponse): Promise<boolean> => {
    if (fault === undefined || fault.times === 0) return false;
    if (fault.times !== undefined) fault.times -= 1;
    switch (fault.kind) {
      case 'status':
        send(response, fault.status, fault.body ?? jamfError(fault.status, 'INTERNAL_ERROR', 'Internal Server Error'));
        return true;
      case 'unauthorized':
        send(response, 401, jamfError(401, 'INVALID_TOKEN', 'Unauthorized'));
        return true;
      case 'rate-limited':
        send(response, 429, jamfError(429, 'TOO_MANY_REQUESTS', 'Too Many Requests'), fault.retryAfter === undefined ? {} : { 'Retry-After': fault.retryAfter });
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

  const inventory = async (url: URL, request: IncomingMessage, response: ServerResponse) => {
    stats.inventoryRequests += 1;
    options.beforeInventoryRequest?.(stats.inventoryRequests);
    if (invalidateAt !== undefined && stats.inventoryRequests >= invalidateAt) {
      tokens.clear();
      invalidateAt = undefined;
    }
    const page = Number(url.searchParams.get('page') ?? '0');
    const requestedSize = Number(url.searchParams.get('page-size') ?? '100');
    const pageSize = Math.min(Math.max(1, requestedSize), maxPageSize);
    const header = request.headers.authorization ?? '';
    const token = header.startsWith('Bearer ') ? tokens.get(header.slice(7)) : undefined;
    const authorized = token !== undefined && (options.tokenMaxUses === undefined || token.uses < options.tokenMaxUses);
    const sections = url.searchParams.getAll('section');
    stats.inventoryLog.push({ page, pageSize: requestedSize, sections, sort: url.searchParams.get('sort'), authorized });
    if (!authorized) {
      stats.rejectedTokens += 1;
      return send(response, 401, jamfError(401, 'INVALID_TOKEN', 'Unauthorized'));
    }
    token.uses += 1;
    if (await applyFault(pageFaults.get(page), response)) return;
    const ordered = options.ignoreSort || url.searchParams.get('sort') !== 'id:asc' ? devices : (sorted ??= [...devices].sort(compareIds));
    const wanted = new Set(sections.map((section) => ALL_SECTIONS[section as keyof typeof ALL_SECTIONS]).filter(Boolean));
    const results = ordered.slice(page * pageSize, page * pageSize + pageSize).map((record) => {
      const shaped: Record<string, unknown> = { ...record };
      // Unrequested sections come back null, as Jamf does.
      for (const key of Object.values(ALL_SECTIONS)) shaped[key] = wanted.has(key) ? (record[key] ?? null) : null;
      return shaped;
    });
    send(response, 200, JSON.stringify({ totalCount: devices.length, results }));
  };

  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const route = `${request.method} ${url.pathname}`;
    const isInventory = route === 'GET /api/v3/computers-inventory';
    if (isInventory) {
      active += 1;
      stats.maxConcurrentInventory = Math.max(stats.maxConcurrentInventory, active);
      response.once('close', () => (active -= 1));
    }
    void (async () => {
      await sleep(latencyMs);
      if (route === 'POST /api/oauth/token' || route === 'POST /api/v1/auth/token') {
        stats.tokenRequests += 1;
        if (await applyFault(tokenFault, response)) return;
        return route === 'POST /api/oauth/token' ? oauthToken(request, response) : basicToken(request, response);
      }
      if (isInventory) return inventory(url, request, response);
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
    stats: () => ({ ...stats, inventoryLog: [...stats.inventoryLog] }),
    resetStats: () => {
      stats = { tokenRequests: 0, inventoryRequests: 0, rejectedTokens: 0, maxConcurrentInventory: 0, inventoryLog: [] };
    },
    invalidateTokens: () => tokens.clear(),
    invalidateTokensAtRequest: (n) => {
      invalidateAt = stats.inventoryRequests + n;
    },
    setPageFault: (page, fault) => {
      if (fault === undefined) pageFaults.delete(page);
      else pageFaults.set(page, { ...fault });
    },
    setTokenFault: (fault) => {
      tokenFault = fault === undefined ? undefined : { ...fault };
    },
    setDevices: (next) => {
      devices = next;
      sorted = undefined;
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

// ---- Realistic records ----

/** A small seeded PRNG (mulberry32), so generated inventories are the same on every run. */
const seededRandom = (seed: number) => {
  let state = seed >>> 0;
  return (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
};

const MODELS = [
  ['MacBook Pro (14-inch, 2023)', 'Mac14,5'],
  ['MacBook Air (M2, 2022)', 'Mac14,2'],
  ['MacBook Pro (16-inch, 2021)', 'MacBookPro18,1'],
  ['Mac mini (2023)', 'Mac14,3'],
  ['iMac (24-inch, M3, 2023)', 'Mac15,4'],
  ['MacBook Air (13-inch, M4, 2025)', 'Mac16,12'],
] as const;
const OS_VERSIONS = [
  ['14.7.1', '23H222'],
  ['15.6', '24G84'],
  ['15.9', '24J100'],
  ['15.10', '24K20'],
  ['26.0 (25A354)', '25A354'],
  ['26.1', '25B78'],
  ['15.1-beta', '24B5035e'],
] as const;
const FIRST_NAMES = ['ada', 'grace', 'linus', 'margaret', 'ken', 'barbara', 'dennis', 'frances', 'alan', 'radia'];
const LAST_NAMES = ['lovelace', 'hopper', 'torvalds', 'hamilton', 'thompson', 'liskov', 'ritchie', 'allen', 'turing', 'perlman'];
const SERIAL_CHARS = 'ABCDEFGHJKLMNPQRSTUVWXYZ0123456789';

/**
 * `count` realistic computers-inventory records with ascending numeric string ids (with gaps):
 * several models and macOS versions, both `lastContactTime` and the newer `lastContact`, and a
 * share of sparse records (null sections, null fields, empty strings) as real fleets have.
 */
export const generateJamfComputers = (count: number, seed = 42): JamfComputer[] => {
  const random = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const sometimes = <T>(probability: number, value: T): T | null => (random() < probability ? value : null);
  const computers: JamfComputer[] = [];
  let id = 0;
  for (let index = 0; index < count; index += 1) {
    id += 1 + (random() < 0.1 ? Math.floor(random() * 5) : 0);
    const [model, modelIdentifier] = pick(MODELS);
    const [version, build] = pick(OS_VERSIONS);
    const first = pick(FIRST_NAMES);
    const last = pick(LAST_NAMES);
    const serial = Array.from({ length: 10 }, () => pick([...SERIAL_CHARS])).join('');
    // Whole seconds, as Jamf writes them (`2026-11-04T11:02:17Z`).
    const contactMs = Date.UTC(2026, 10, 1) + Math.floor(random() * 20 * 86_400) * 1000;
    const contact = new Date(contactMs).toISOString().replace('.000Z', 'Z');
    const report = new Date(contactMs - Math.floor(random() * 86_400) * 1000).toISOString().replace('.000Z', 'Z');
    const sparse = random() < 0.15;
    const newerApi = random() < 0.3;
    computers.push({
      id: String(id),
      udid: sparse && random() < 0.3 ? null : randomUuidFrom(random),
      general: {
        name: sparse && random() < 0.3 ? '' : `${first}-${model.split(' ')[0]!.toLowerCase()}-${id}`,
        lastIpAddress: `10.${Math.floor(random() * 255)}.${Math.floor(random() * 255)}.${Math.floor(random() * 255)}`,
        platform: 'Mac',
        barcode1: null,
        assetTag: sometimes(0.5, `AT-${id}`),
        remoteManagement: sparse && random() < 0.3 ? null : { managed: random() < 0.95, managementUsername: 'jamfadmin' },
        supervised: sparse && random() < 0.3 ? null : random() < 0.8,
        reportDate: report,
        ...(newerApi ? { lastContact: contact } : { lastContactTime: sparse && random() < 0.3 ? null : contact }),
        site: { id: '-1', name: 'None' },
        enrolledViaAutomatedDeviceEnrollment: random() < 0.7,
        extensionAttributes: [],
      },
      hardware:
        sparse && random() < 0.3
          ? null
          : {
              make: 'Apple',
              model,
              modelIdentifier,
              serialNumber: sparse && random() < 0.3 ? '' : `C02${serial}`,
              processorArchitecture: 'arm64',
              totalRamMegabytes: pick([8192, 16384, 32768]),
              extensionAttributes: [],
            },
      operatingSystem:
        sparse && random() < 0.2
          ? null
          : { name: 'macOS', version: sparse && random() < 0.3 ? '' : version, build, activeDirectoryStatus: 'Not Bound', fileVault2Status: 'ALL_ENCRYPTED' },
      userAndLocation:
        sparse && random() < 0.5
          ? null
          : {
              username: `${first}.${last}`,
              realname: `${first} ${last}`,
              email: sometimes(0.9, `${first}.${last}@example.com`) ?? '',
              position: null,
              phone: '',
              departmentId: '-1',
              extensionAttributes: [],
            },
      diskEncryption: { fileVault2Enabled: true },
      purchasing: { leased: false, purchased: true },
      applications: null,
    });
  }
  return computers;
};

const randomUuidFrom = (random: () => number): string => {
  const hex = Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16)).join('').toUpperCase();
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};
