import { afterEach, describe, expect, it } from 'vitest';
import { fetchDestinationUsers, type FetchDestinationUsersOptions } from '../../../lib/ticketing/user-listing-client.ts';
import { TicketingListingError } from '../../../lib/ticketing/ticketing-error.ts';
import {
  generateTicketingUsers,
  startFakeTicketing,
  type FakeTicketing,
  type FakeTicketingOptions,
  type FakeTicketingRequest,
} from '../../support/fake-ticketing.ts';

let fake: FakeTicketing | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

const start = async (options: FakeTicketingOptions = {}) => {
  fake = await startFakeTicketing(options);
  return fake;
};

/**
 * Records requested waits instead of sleeping, so retry tests run instantly; `now` is a clock the
 * waits move on, as real sleeps would move the real one (the listing's rate-limit pauses read it).
 */
const recordingSleep = () => {
  const waits: number[] = [];
  let skipped = 0;
  return {
    waits,
    now: () => Date.now() + skipped,
    sleep: async (ms: number) => {
      waits.push(ms);
      skipped += ms;
    },
  };
};

const fetchFrom = (server: FakeTicketing, overrides: Partial<FetchDestinationUsersOptions> = {}) =>
  fetchDestinationUsers({ baseUrl: server.url, username: server.username, password: server.password, ...overrides });

const failure = async (promise: Promise<unknown>): Promise<TicketingListingError> => {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(TicketingListingError);
  return error as TicketingListingError;
};

describe('fetchDestinationUsers', () => {
  it('reads every page of 250 users (3 pages) into a map keyed by the email key (lower case)', async () => {
    const users = generateTicketingUsers(250);
    const server = await start({ users });
    const map = await fetchFrom(server);
    expect(map.size).toBe(250);
    expect([...server.requests].sort((a, b) => a - b)).toEqual([1, 2, 3]);
    expect(server.requests[0]).toBe(1);
    expect(map.get('agent.0@example.com')).toBe(users[0]!.id);
    expect(map.get('agent.249@example.com')).toBe(users[249]!.id);
  });

  it('asks for no other page until page 1 has answered, even when page 1 needs a retry', async () => {
    const server = await start({ users: generateTicketingUsers(250) });
    server.failNext(1, { kind: 'status', status: 503 });
    const { sleep, now } = recordingSleep();
    expect((await fetchFrom(server, { sleep, now })).size).toBe(250);
    expect(server.requests.slice(0, 2)).toEqual([1, 1]);
    expect(server.requests.slice(2).sort((a, b) => a - b)).toEqual([2, 3]);
  });

  it('keeps ids above 2^53 exact', async () => {
    const server = await start({
      users: [
        { id: '9223372036854775807', email: 'max@example.com', name: 'Max' },
        { id: '9007199254740993', email: 'odd@example.com', name: 'Odd' },
      ],
    });
    const map = await fetchFrom(server);
    expect(map.get('max@example.com')).toBe('9223372036854775807');
    expect(map.get('odd@example.com')).toBe('9007199254740993');
  });

  it('reads pages 2..N concurrently but never more than the bound at once', async () => {
    const server = await start({ users: generateTicketingUsers(1_200) });
    const map = await fetchFrom(server, { concurrency: 3 });
    expect(map.size).toBe(1_200);
    expect(server.requests).toHaveLength(12);
    expect(server.maxConcurrent()).toBeGreaterThan(1);
    expect(server.maxConcurrent()).toBeLessThanOrEqual(3);
  });

  it('reads the listing again when a user is removed while it is read, so nobody falls between two pages', async () => {
    const everyone = generateTicketingUsers(250);
    let removed = false;
    const server = await start({
      users: everyone,
      // Agent 0 leaves right after page 1 went out: Agent 100 moves up to page 1, already read.
      afterPage: (page, users) => {
        if (page === 1 && !removed) {
          removed = true;
          users.shift();
        }
      },
    });
    const users = await fetchFrom(server);
    expect(users.size).toBe(249);
    expect(users.get('agent.100@example.com')).toBe(everyone[100]!.id);
    expect(users.has('agent.0@example.com')).toBe(false);
    expect(server.requests.filter((page) => page === 1)).toHaveLength(2);
  });

  it('fails, saying so, when users keep being removed through every read', async () => {
    const server = await start({
      users: generateTicketingUsers(250),
      afterPage: (page, users) => {
        if (page === 1) users.shift();
      },
    });
    const error = await failure(fetchFrom(server));
    expect(error.message).toBe(
      'User listing kept losing users while it was read (3 reads; the last went from 248 to 247 users); run the import again when it is quiet',
    );
    expect(server.requests.filter((page) => page === 1)).toHaveLength(3);
  });

  it('keeps a read during which users were only added (nobody is skipped; a repeated entry keeps its first id)', async () => {
    let next = 10_000;
    const server = await start({
      users: generateTicketingUsers(250),
      afterPage: (page, users) => {
        // One added at the front: every later user moves one place down, the last of page 1 repeats on page 2.
        if (page === 1) users.unshift({ id: String((next += 1)), email: `new.${next}@example.com`, name: 'New' });
      },
    });
    const users = await fetchFrom(server);
    expect(users.size).toBe(250);
    expect(server.requests.filter((page) => page === 1)).toHaveLength(1);
  });

  it('shares one 429 wait budget across the reads of a listing that changed', async () => {
    const recorder = recordingSleep();
    let removed = 0;
    const server: FakeTicketing = await start({
      users: generateTicketingUsers(250),
      afterPage: (page, users) => {
        if (page !== 1) return;
        // In each read, page 2 asks for a 1 s wait once: 3 s over three reads, against a 2.5 s budget.
        server.failNext(2, { kind: 'status', status: 429, retryAfter: '1' });
        if (removed < 2) {
          removed += 1;
          users.shift();
        }
      },
    });
    const error = await failure(fetchFrom(server, { sleep: recorder.sleep, now: recorder.now, maxRateLimitWaitMs: 2_500 }));
    expect(error.message).toMatch(/rate limited \(HTTP 429\): Retry-After 1 s exceeds the remaining 500 ms of the 2500 ms wait budget/);
    expect(recorder.waits).toEqual([1_000, 1_000]);
    // The third read's wait is the one refused: the first two reads' waits counted against it.
    expect(server.requests.filter((page) => page === 1)).toHaveLength(3);
  });

  it('keeps a listing that states count on page 1 only', async () => {
    const server = await start({ users: generateTicketingUsers(250), countOnFirstPageOnly: true });
    const users = await fetchFrom(server);
    expect(users.size).toBe(250);
  });

  it('follows next_page until null when the listing gives no count', async () => {
    const server = await start({ users: generateTicketingUsers(230), omitCount: true });
    const map = await fetchFrom(server);
    expect(map.size).toBe(230);
    expect(server.requests).toEqual([1, 2, 3]);
  });

  it('reads a single page for an empty listing', async () => {
    const server = await start({ users: [] });
    expect((await fetchFrom(server)).size).toBe(0);
    expect(server.requests).toEqual([1]);
  });

  it('matches emails case-insensitively and keeps the first id when the listing repeats an email', async () => {
    const server = await start({
      users: [
        { id: '11', email: ' Jane.Doe@Example.COM ', name: 'Jane' },
        { id: '12', email: 'jane.doe@example.com', name: 'Jane again' },
        { id: '13', email: null, name: 'No email' },
        { id: '14', email: 'STRASSE@x.de', name: 'Sharp s' },
        { id: '15', email: 'straße@x.de', name: 'Sharp s again' },
      ],
    });
    const map = await fetchFrom(server);
    expect([...map.entries()]).toEqual([
      ['jane.doe@example.com', '11'],
      ['strasse@x.de', '14'],
    ]);
  });

  it('waits for Retry-After on a 429 and then reads the page', async () => {
    const server = await start({ users: generateTicketingUsers(150) });
    server.failNext(2, { kind: 'status', status: 429, retryAfter: '7' });
    const { waits, sleep, now } = recordingSleep();
    const map = await fetchFrom(server, { sleep, now });
    expect(map.size).toBe(150);
    expect(waits).toEqual([7_000]);
    expect(server.requests.filter((page) => page === 2)).toHaveLength(2);
  });

  it('fails when rate limiting outlasts the wait budget', async () => {
    const server = await start({ users: generateTicketingUsers(50) });
    server.failNext(1, { kind: 'status', status: 429, retryAfter: '30' });
    server.failNext(1, { kind: 'status', status: 429, retryAfter: '30' });
    const { sleep, now } = recordingSleep();
    const error = await failure(fetchFrom(server, { sleep, now, maxRateLimitWaitMs: 45_000 }));
    expect(error.message).toBe(
      `User listing ${server.url}/api/v1/users.json?page=1 is rate limited (HTTP 429): Retry-After 30 s exceeds the remaining 15 s of the 45 s wait budget`,
    );
  });

  it('fails at once, saying why, when a single Retry-After exceeds the whole default budget', async () => {
    const server = await start({ users: generateTicketingUsers(50) });
    server.failNext(1, { kind: 'status', status: 429, retryAfter: '130' });
    const { waits, sleep, now } = recordingSleep();
    const error = await failure(fetchFrom(server, { sleep, now }));
    expect(error.message).toBe(
      `User listing ${server.url}/api/v1/users.json?page=1 is rate limited (HTTP 429): Retry-After 130 s exceeds the remaining 120 s of the 120 s wait budget`,
    );
    expect(waits).toEqual([]);
    expect(server.requests).toEqual([1]);
  });

  it('names the backoff when a 429 without Retry-After would exceed the remaining budget', async () => {
    const server = await start({ users: generateTicketingUsers(50) });
    for (let attempt = 0; attempt < 3; attempt += 1) server.failNext(1, { kind: 'status', status: 429 });
    const { waits, sleep, now } = recordingSleep();
    const error = await failure(fetchFrom(server, { sleep, now, backoffMs: 1_000, maxRateLimitWaitMs: 5_000 }));
    expect(waits).toEqual([1_000, 2_000]);
    expect(error.message).toMatch(/\(HTTP 429\): the next 4 s backoff exceeds the remaining 2 s of the 5 s wait budget$/);
  });

  it('retries a 5xx with growing backoff and then succeeds', async () => {
    const server = await start({ users: generateTicketingUsers(120) });
    server.failNext(2, { kind: 'status', status: 503 });
    server.failNext(2, { kind: 'status', status: 500 });
    const { waits, sleep, now } = recordingSleep();
    const map = await fetchFrom(server, { sleep, now, backoffMs: 100 });
    expect(map.size).toBe(120);
    expect(waits).toEqual([100, 200]);
  });

  it('caps the backoff of 5xx retries and of 429s without Retry-After alike, at 64 × backoffMs', async () => {
    const server = await start({ users: generateTicketingUsers(50) });
    for (let attempt = 0; attempt < 8; attempt += 1) server.failNext(1, { kind: 'status', status: 503 });
    for (let attempt = 0; attempt < 8; attempt += 1) server.failNext(1, { kind: 'status', status: 429 });
    const { waits, sleep, now } = recordingSleep();
    expect((await fetchFrom(server, { sleep, now, backoffMs: 10, maxRetries: 8 })).size).toBe(50);
    const growing = [10, 20, 40, 80, 160, 320, 640, 640];
    expect(waits).toEqual([...growing, ...growing]);
  });

  it('fails the whole listing when a page keeps answering 5xx (never a partial map)', async () => {
    const server = await start({ users: generateTicketingUsers(300) });
    for (let attempt = 0; attempt < 4; attempt += 1) server.failNext(3, { kind: 'status', status: 502 });
    const { sleep, now } = recordingSleep();
    const error = await failure(fetchFrom(server, { sleep, now, maxRetries: 3 }));
    expect(error.message).toMatch(/page=3 failed with HTTP 502 \(4 attempts\)/);
  });

  it('fails clearly when the credentials are rejected, without the password in the message', async () => {
    const server = await start({ users: generateTicketingUsers(10), password: 'right-password' });
    const error = await failure(fetchFrom(server, { password: 'Wr0ng-S3cret' }));
    expect(error.message).toMatch(/credentials rejected .* \(HTTP 401\)/);
    expect(`${error.message} ${String(error.cause ?? '')}`).not.toContain('Wr0ng-S3cret');
    expect(server.requests).toEqual([1]);
  });

  it('does not retry a 401', async () => {
    const server = await start({ users: generateTicketingUsers(10) });
    server.failNext(1, { kind: 'status', status: 401 });
    const { waits, sleep, now } = recordingSleep();
    await failure(fetchFrom(server, { sleep, now }));
    expect(waits).toEqual([]);
  });

  it('does not retry a 501: the listing retries the statuses every upstream request does (500, 502, 503, 504)', async () => {
    const server = await start({ users: generateTicketingUsers(10) });
    server.failNext(1, { kind: 'status', status: 501 });
    const { waits, sleep, now } = recordingSleep();
    const error = await failure(fetchFrom(server, { sleep, now }));
    expect(error.message).toMatch(/answered HTTP 501/);
    expect(waits).toEqual([]);
    expect(server.requests).toEqual([1]);
  });

  it('fails clearly on a body that is not JSON', async () => {
    const server = await start({ users: generateTicketingUsers(150) });
    server.failNext(2, { kind: 'garbage' });
    const error = await failure(fetchFrom(server));
    expect(error.message).toMatch(/unreadable: the body is not JSON/);
  });

  it('fails clearly on JSON of the wrong shape', async () => {
    const server = await start({ users: generateTicketingUsers(10) });
    server.failNext(1, { kind: 'wrong-shape' });
    const error = await failure(fetchFrom(server));
    expect(error.message).toMatch(/no "users" array/);
  });

  it('fails on a user whose id is not an integer', async () => {
    const server = await start({ users: [{ id: '1.5', email: 'a@example.com', name: 'A' }] });
    const error = await failure(fetchFrom(server));
    expect(error.message).toMatch(/users\[0\]\.id is not an integer/);
  });

  it('fails naming the page on a user id beyond the signed 64-bit range', async () => {
    const users = generateTicketingUsers(150);
    users[120] = { id: '99999999999999999999', email: 'huge@example.com', name: 'Huge' };
    const server = await start({ users });
    const error = await failure(fetchFrom(server));
    expect(error.message).toBe(
      `User listing ${server.url}/api/v1/users.json?page=2 answered something unreadable: users[20].id 99999999999999999999 is outside the signed 64-bit range`,
    );
  });

  it('fails on a user id one above 2^63-1 and accepts -2^63', async () => {
    const tooBig = await start({ users: [{ id: '9223372036854775808', email: 'a@example.com', name: 'A' }] });
    expect((await failure(fetchFrom(tooBig))).message).toMatch(/users\[0\]\.id 9223372036854775808 is outside the signed 64-bit range$/);
    await tooBig.close();
    fake = undefined;
    const lowest = await start({ users: [{ id: '-9223372036854775808', email: 'min@example.com', name: 'Min' }] });
    expect((await fetchFrom(lowest)).get('min@example.com')).toBe('-9223372036854775808');
  });

  it('gives up on a page that does not answer within the timeout, after bounded retries', async () => {
    const server = await start({ users: generateTicketingUsers(10) });
    server.failNext(1, { kind: 'hang' });
    server.failNext(1, { kind: 'hang' });
    const { sleep, now } = recordingSleep();
    const error = await failure(fetchFrom(server, { sleep, now, timeoutMs: 150, maxRetries: 1 }));
    expect(error.message).toMatch(/timed out after 150 ms \(2 attempts\)/);
  });

  it('fails when the listing is unreachable', async () => {
    const server = await start();
    const url = server.url;
    await server.close();
    fake = undefined;
    const { sleep, now } = recordingSleep();
    const error = await failure(fetchDestinationUsers({ baseUrl: url, username: 'u', password: 'p', sleep, now, maxRetries: 1 }));
    expect(error.message).toMatch(/was unreachable/);
  });

  it('refuses a count that implies more pages than the bound', async () => {
    const server = await start({ users: generateTicketingUsers(501) });
    const error = await failure(fetchFrom(server, { maxPages: 5 }));
    expect(error.message).toMatch(/more than 5 pages/);
    expect(server.requests).toEqual([1]);
  });

  it('refuses a next_page on another origin rather than send the credentials there', async () => {
    const server = await start({ users: generateTicketingUsers(150), omitCount: true, nextPageBase: 'http://localhost:1' });
    const error = await failure(fetchFrom(server));
    expect(error.message).toBe("User listing's next_page points to another origin (http://localhost:1)");
    expect(server.requests).toEqual([1]);
  });

  it('reports a redirect instead of following it', async () => {
    const server = await start({ users: generateTicketingUsers(10) });
    server.failNext(1, { kind: 'redirect', location: 'http://localhost:1/login' });
    const error = await failure(fetchFrom(server));
    expect(error.message).toMatch(/answered HTTP 302$/);
  });

  it('accepts Retry-After given as an HTTP date', async () => {
    const server = await start({ users: generateTicketingUsers(10) });
    server.failNext(1, { kind: 'status', status: 429, retryAfter: new Date(Date.now() + 60_000).toUTCString() });
    const { waits, sleep, now } = recordingSleep();
    expect((await fetchFrom(server, { sleep, now })).size).toBe(10);
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThan(55_000);
    expect(waits[0]).toBeLessThanOrEqual(60_000);
  });
});

/** Page numbers and cursor places the fake answered, in order, as `pages 3` / `cursor 2`. */
const answered = (server: FakeTicketing, pagination: 'pages' | 'cursor'): number[] =>
  server.log.filter((request) => request.pagination === pagination).map((request) => request.page);

/** 1..n */
const upTo = (n: number): number[] => Array.from({ length: n }, (_, index) => index + 1);

/** A request that reached the fake after an answer with nothing remaining but before the reset it named. */
const TIMER_SLACK_MS = 100;
/** Requests the client had started before the answer reached it are exempt ("in flight"). */
const IN_FLIGHT_MS = 100;
const pauseBreaches = (log: readonly FakeTicketingRequest[]): string[] =>
  log
    .filter((pause) => pause.remaining === 0 && pause.resetSeconds !== undefined)
    .flatMap((pause) => {
      const resumesAt = pause.answeredAt + pause.resetSeconds! * 1000;
      return log
        .filter((later) => later.arrivedAt > pause.answeredAt + IN_FLIGHT_MS && later.arrivedAt < resumesAt - TIMER_SLACK_MS)
        .map(
          (later) =>
            `${later.pagination} ${later.page} arrived ${later.arrivedAt - pause.answeredAt} ms after a pause of ${pause.resetSeconds} s began`,
        );
    });

describe('fetchDestinationUsers: listings beyond 10,000 users, stale counts and rate limits', () => {
  const LARGE = 25_000;

  it('reads 25,000 users by cursor, one page after another in order, ids above 2^53 exact (pagination: cursor)', async () => {
    const users = generateTicketingUsers(LARGE);
    const server = await start({ users });
    const map = await fetchFrom(server, { pagination: 'cursor' });
    expect(map.size).toBe(LARGE);
    expect(map.get('agent.0@example.com')).toBe('9007199254740993');
    expect(map.get(`agent.${LARGE - 1}@example.com`)).toBe(users[LARGE - 1]!.id);
    expect(answered(server, 'cursor')).toEqual(upTo(LARGE / 100));
    expect(answered(server, 'pages')).toEqual([]);
    expect(server.maxConcurrent()).toBe(1);
  });

  it('switches a page-number read of 25,000 users to cursor paging from the start when page 101 is refused, saying so once', async () => {
    const users = generateTicketingUsers(LARGE);
    const server = await start({ users });
    const notes: string[] = [];
    const map = await fetchFrom(server, { notify: (message) => notes.push(message) });
    expect(map.size).toBe(LARGE);
    expect(map.get(`agent.${LARGE - 1}@example.com`)).toBe(users[LARGE - 1]!.id);
    expect(notes).toEqual([
      'User listing refused page 101 (HTTP 400: no page-number paging past 10,000 users); reading it again from the start with cursor paging (TICKETING_PAGINATION=cursor starts there)',
    ]);
    // Page 101 is asked for right after page 1, so the refusal costs a few pages, not a hundred.
    const numbered = server.log.filter((request) => request.pagination === 'pages');
    expect(numbered[0]).toMatchObject({ page: 1, status: 200 });
    expect(numbered.find((request) => request.page === 101)).toMatchObject({ status: 400 });
    expect(numbered.length).toBeLessThanOrEqual(10);
    expect(answered(server, 'cursor')).toEqual(upTo(LARGE / 100));
  });

  it('reads 25,000 users by page number, four at a time, from a destination that allows deep page numbers', async () => {
    const server = await start({ users: generateTicketingUsers(LARGE), offsetLimit: null });
    const notes: string[] = [];
    const map = await fetchFrom(server, { notify: (message) => notes.push(message) });
    expect(map.size).toBe(LARGE);
    expect([...server.requests].sort((a, b) => a - b)).toEqual(upTo(LARGE / 100));
    expect(server.maxConcurrent()).toBeGreaterThan(1);
    expect(server.maxConcurrent()).toBeLessThanOrEqual(4);
    expect(notes).toEqual([]);
  });

  it('reads past a stale count that says fewer users than there are, while pages still give a next_page', async () => {
    const users = generateTicketingUsers(450);
    const server = await start({ users, statedCount: 150 });
    const map = await fetchFrom(server);
    expect(map.size).toBe(450);
    expect(map.get('agent.449@example.com')).toBe(users[449]!.id);
    const pages = new Set(server.requests);
    for (const page of upTo(5)) expect(pages.has(page)).toBe(true);
    // Past the last page, at most one batch of four is read ahead.
    expect(Math.max(...server.requests)).toBeLessThanOrEqual(6);
  });

  it('ends the read past a stale count at an empty page, even where the listing still gives a next_page', async () => {
    const server = await start({ users: generateTicketingUsers(120), statedCount: 50 });
    // Page 2 holds the last 20 users and no next_page; nothing beyond it is kept.
    expect((await fetchFrom(server)).size).toBe(120);
    expect(Math.max(...server.requests)).toBeLessThanOrEqual(5);
  });

  it('switches to cursor paging when a stale count below 10,000 hides users past page 100', async () => {
    const server = await start({ users: generateTicketingUsers(10_250), statedCount: 9_950 });
    const notes: string[] = [];
    const map = await fetchFrom(server, { notify: (message) => notes.push(message) });
    expect(map.size).toBe(10_250);
    expect(notes).toHaveLength(1);
    expect(answered(server, 'cursor')).toEqual(upTo(103));
  });

  it('reads every user when a stale count says more than there are (empty pages past the end)', async () => {
    const server = await start({ users: generateTicketingUsers(250), statedCount: 600 });
    expect((await fetchFrom(server)).size).toBe(250);
    expect([...server.requests].sort((a, b) => a - b)).toEqual(upTo(6));
  });

  it('reads every user by cursor when a stale count above 10,000 hides a listing below it', async () => {
    const server = await start({ users: generateTicketingUsers(9_000), statedCount: 12_000 });
    const notes: string[] = [];
    expect((await fetchFrom(server, { notify: (message) => notes.push(message) })).size).toBe(9_000);
    expect(notes).toHaveLength(1);
    expect(answered(server, 'cursor')).toEqual(upTo(90));
  });

  it('fails on a 400 for a page up to 100 (not a paging limit) instead of switching', async () => {
    const server = await start({ users: generateTicketingUsers(300) });
    server.failNext(2, { kind: 'status', status: 400 });
    const notes: string[] = [];
    const error = await failure(fetchFrom(server, { notify: (message) => notes.push(message) }));
    expect(error.message).toBe(`User listing ${server.url}/api/v1/users.json?page=2 answered HTTP 400`);
    expect(notes).toEqual([]);
    expect(answered(server, 'cursor')).toEqual([]);
  });

  it('fails clearly, and stops, when a cursor repeats', async () => {
    const server = await start({ users: generateTicketingUsers(500) });
    server.failNext(2, { kind: 'repeat-cursor' }, 'cursor');
    const error = await failure(fetchFrom(server, { pagination: 'cursor' }));
    expect(error.message).toMatch(/^User listing's cursor repeats: links\.next of .*page%5Bafter%5D=.* leads back to .*, already read$/);
    expect(answered(server, 'cursor')).toEqual([1, 2]);
  });

  it('fails clearly, and stops, when a cursor does not advance (a page gives back the cursor it was asked with)', async () => {
    const server = await start({ users: generateTicketingUsers(500) });
    server.failNext(2, { kind: 'stuck-cursor' }, 'cursor');
    const error = await failure(fetchFrom(server, { pagination: 'cursor' }));
    expect(error.message).toMatch(/^User listing's cursor repeats: .*page%5Bafter%5D=.* gives the after_cursor of a page already read$/);
    expect(answered(server, 'cursor')).toEqual([1, 2]);
  });

  it('fails the whole listing, naming the page, when a cursor page keeps failing mid-way', async () => {
    const server = await start({ users: generateTicketingUsers(500) });
    for (let attempt = 0; attempt < 4; attempt += 1) server.failNext(3, { kind: 'status', status: 500 }, 'cursor');
    const { sleep, now } = recordingSleep();
    const error = await failure(fetchFrom(server, { pagination: 'cursor', sleep, now }));
    expect(error.message).toMatch(/^User listing .*page%5Bafter%5D=.* failed with HTTP 500 \(4 attempts\)$/);
    expect(answered(server, 'cursor')).toEqual([1, 2, 3, 3, 3, 3]);
  });

  it('fails clearly when the destination does not page by cursor', async () => {
    const server = await start({ users: generateTicketingUsers(150), cursorPaging: false });
    const error = await failure(fetchFrom(server, { pagination: 'cursor' }));
    expect(error.message).toBe(
      `User listing ${server.url}/api/v1/users.json?page[size]=100 answered without cursor paging's "meta.has_more": the destination does not page by cursor (TICKETING_PAGINATION=pages reads it by page number)`,
    );
  });

  it('refuses a links.next on another origin rather than send the credentials there', async () => {
    const server = await start({ users: generateTicketingUsers(150), nextPageBase: 'http://localhost:1' });
    const error = await failure(fetchFrom(server, { pagination: 'cursor' }));
    expect(error.message).toBe("User listing's links.next points to another origin (http://localhost:1)");
    expect(answered(server, 'cursor')).toEqual([1]);
  });

  it('reads an empty listing by cursor in one request', async () => {
    const server = await start({ users: [] });
    expect((await fetchFrom(server, { pagination: 'cursor' })).size).toBe(0);
    expect(answered(server, 'cursor')).toEqual([1]);
  });

  it('starts no request after X-Rate-Limit-Remaining: 0 until the reset, so a paced cursor read meets no 429', async () => {
    const server = await start({ users: generateTicketingUsers(500), rateLimit: { limit: 2, windowMs: 1_000 } });
    const started = Date.now();
    expect((await fetchFrom(server, { pagination: 'cursor' })).size).toBe(500);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(server.log.map((request) => request.status)).toEqual([200, 200, 200, 200, 200]);
    expect(server.log.filter((request) => request.remaining === 0).length).toBeGreaterThanOrEqual(2);
    expect(pauseBreaches(server.log)).toEqual([]);
    // The request after each pause came a reset later (generous bounds: the reset is a whole second).
    for (const [index, request] of server.log.entries()) {
      if (request.remaining === 0 && index + 1 < server.log.length)
        expect(server.log[index + 1]!.arrivedAt - request.answeredAt).toBeGreaterThanOrEqual(900);
    }
  });

  it('paces a page-number read one page at a time by X-Rate-Limit-Remaining, meeting no 429', async () => {
    const server = await start({ users: generateTicketingUsers(600), rateLimit: { limit: 3, windowMs: 1_000 } });
    expect((await fetchFrom(server, { concurrency: 1 })).size).toBe(600);
    expect(server.log.map((request) => request.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(server.log.filter((request) => request.remaining === 0)).toHaveLength(2);
    expect(pauseBreaches(server.log)).toEqual([]);
  });

  it('holds new page-number requests for the reset while requests in flight finish, and retries any 429 they meet', async () => {
    const server = await start({ users: generateTicketingUsers(1_000), rateLimit: { limit: 3, windowMs: 1_000 } });
    const started = Date.now();
    expect((await fetchFrom(server)).size).toBe(1_000);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(server.log.filter((request) => request.remaining === 0).length).toBeGreaterThanOrEqual(2);
    expect(pauseBreaches(server.log)).toEqual([]);
    expect(new Set(server.requests)).toEqual(new Set(upTo(10)));
  });

  it('waits out a burst of 429s on pages in flight together, and starts nothing new until their Retry-After', async () => {
    const server = await start({ users: generateTicketingUsers(800) });
    for (const page of [2, 3, 4, 5]) server.failNext(page, { kind: 'status', status: 429, retryAfter: '1' });
    const started = Date.now();
    expect((await fetchFrom(server)).size).toBe(800);
    expect(Date.now() - started).toBeLessThan(15_000);
    const throttled = server.log.filter((request) => request.status === 429);
    expect(throttled.map((request) => request.page).sort()).toEqual([2, 3, 4, 5]);
    expect(pauseBreaches(server.log)).toEqual([]);
    // Every page is read, each throttled one once more after its wait.
    expect([...server.requests].sort((a, b) => a - b)).toEqual([1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 7, 8]);
  });

  it('counts a pause named by X-Rate-Limit-Remaining: 0 against the wait budget, failing at once past it', async () => {
    const server = await start({ users: generateTicketingUsers(300), rateLimit: { limit: 1, windowMs: 200_000 } });
    const { waits, sleep, now } = recordingSleep();
    const error = await failure(fetchFrom(server, { sleep, now }));
    expect(error.message).toMatch(
      /page=\d is rate limited \(X-Rate-Limit-Remaining 0\): its reset in \d+ (s|ms) exceeds the remaining 120 s of the 120 s wait budget$/,
    );
    expect(waits).toEqual([]);
    expect(server.requests).toEqual([1]);
  });
});
