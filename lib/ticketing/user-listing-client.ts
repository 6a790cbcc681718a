import { setTimeout as delay } from 'node:timers/promises';
import { backoffDelayMs, type Backoff } from '../backoff.ts';
import { emailKey } from '../email-key.ts';
import { runBounded } from '../upstream/bounded-pool.ts';
import { callUpstream, redactUrl, retryAfterMs, UpstreamCallError, type UpstreamResponse } from '../upstream/upstream-call.ts';
import { TicketingListingError } from './ticketing-error.ts';
import { parseUsersPage, type UsersPage } from './users-page.ts';

/** The listing's fixed page size. */
const PAGE_SIZE = 100;
/** How often a listing that changed while it was read is read again before the run gives up. */
const LISTING_REREADS = 2;

export interface FetchDestinationUsersOptions {
  baseUrl: string;
  username: string;
  password: string;
  /** Pages 2..N are read this many at a time. */
  concurrency?: number;
  timeoutMs?: number;
  /** 5xx answers, timeouts and network errors are retried this many times per page. */
  maxRetries?: number;
  /**
   * The wait before a page's first retry (default 500 ms), doubling with each further one up to
   * 64 × backoffMs: after a 5xx, a timeout, a network error, or a 429 without Retry-After.
   */
  backoffMs?: number;
  /**
   * Total time one listing read may spend waiting on 429 answers, across all pages (default 120 s).
   * Bounded so a throttled listing cannot hold an import (or a Lambda) indefinitely; a wait that
   * would overrun it fails at once with the wait and what is left, rather than sleep in vain.
   */
  maxRateLimitWaitMs?: number;
  /** Guards against a listing that never ends (a `count` or `next_page` chain gone wrong). */
  maxPages?: number;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  signal?: AbortSignal;
}

/** A trimmed email's key (email-key.ts) → the destination's id as exact decimal text. */
export type DestinationUsers = Map<string, string>;

const RATE_LIMIT_ATTEMPTS_PER_PAGE = 20;
/**
 * A page's backoff stops growing at 2^6 = 64 × backoffMs (32 s by default): a page throttled without
 * Retry-After keeps trying every 32 s while the wait budget lasts, instead of soon asking for a wait
 * that overruns it.
 */
const MAX_BACKOFF_DOUBLINGS = 6;

const defaultSleep = (ms: number, signal: AbortSignal) => delay(ms, undefined, { signal });

/** Whole seconds as `130 s`; anything finer in ms, so a message never rounds a wait across the budget. */
const formatWait = (ms: number): string => (ms % 1000 === 0 ? `${ms / 1000} s` : `${Math.ceil(ms)} ms`);

interface Settings {
  authorization: string;
  timeoutMs: number;
  maxRetries: number;
  backoff: Backoff;
  maxRateLimitWaitMs: number;
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  signal: AbortSignal;
  /**
   * How long 429s have been waited for, shared by every page of every read of the listing (the 429
   * budget is per job): one object, so copies of these settings (a read's own abort signal) add to it.
   */
  rateLimitWaited: { ms: number };
}

const fetchPage = async (url: string, settings: Settings): Promise<UsersPage> => {
  // Credentials never reach a message: user info is stripped from any URL that is shown.
  const shown = redactUrl(url);
  let failures = 0;
  let rateLimited = 0;
  // Each pass either returns, throws, or uses up a bounded retry (failures ≤ maxRetries, 429s ≤ the cap).
  for (;;) {
    settings.signal.throwIfAborted();
    let response: UpstreamResponse;
    try {
      response = await callUpstream(
        url,
        { headers: { authorization: settings.authorization, accept: 'application/json' } },
        { signal: settings.signal, timeoutMs: settings.timeoutMs },
      );
    } catch (error) {
      settings.signal.throwIfAborted();
      failures += 1;
      const problem = error instanceof UpstreamCallError && error.failure === 'timed-out' ? `timed out after ${settings.timeoutMs} ms` : 'was unreachable';
      if (failures > settings.maxRetries) throw new TicketingListingError(`User listing ${shown} ${problem} (${failures} attempts)`, error);
      await settings.sleep(backoffDelayMs(settings.backoff, failures), settings.signal);
      continue;
    }
    if (response.status >= 200 && response.status < 300) {
      const page = parseUsersPage(response.text);
      if (typeof page === 'string') throw new TicketingListingError(`User listing ${shown} answered something unreadable: ${page}`);
      return page;
    }
    if (response.status === 401 || response.status === 403) {
      throw new TicketingListingError(`Ticketing credentials rejected by ${shown} (HTTP ${response.status})`);
    }
    if (response.status === 429) {
      rateLimited += 1;
      if (rateLimited > RATE_LIMIT_ATTEMPTS_PER_PAGE) {
        throw new TicketingListingError(`User listing ${shown} is still rate limited (HTTP 429) after ${RATE_LIMIT_ATTEMPTS_PER_PAGE} retries`);
      }
      const retryAfter = retryAfterMs(response.headers.get('retry-after'));
      const wait = retryAfter ?? backoffDelayMs(settings.backoff, rateLimited);
      // The budget is shared by every page of every read of this listing (see maxRateLimitWaitMs).
      const remaining = settings.maxRateLimitWaitMs - settings.rateLimitWaited.ms;
      if (wait > remaining) {
        const asked = retryAfter === undefined ? `the next ${formatWait(wait)} backoff` : `Retry-After ${formatWait(wait)}`;
        throw new TicketingListingError(
          `User listing ${shown} is rate limited (HTTP 429): ${asked} exceeds the remaining ${formatWait(remaining)} of the ${formatWait(settings.maxRateLimitWaitMs)} wait budget`,
        );
      }
      settings.rateLimitWaited.ms += wait;
      await settings.sleep(wait, settings.signal);
      continue;
    }
    if (response.status >= 500) {
      failures += 1;
      if (failures > settings.maxRetries) throw new TicketingListingError(`User listing ${shown} failed with HTTP ${response.status} (${failures} attempts)`);
      await settings.sleep(backoffDelayMs(settings.backoff, failures), settings.signal);
      continue;
    }
    // A redirect is reported, not followed: basic credentials go to the configured host only.
    throw new TicketingListingError(`User listing ${shown} answered HTTP ${response.status}`);
  }
};

/** Reads pages `from..to` with at most `concurrency` requests in flight; any page failing fails all. */
const fetchPagesConcurrently = async (
  pageUrl: (page: number) => string,
  from: number,
  to: number,
  concurrency: number,
  settings: Settings,
): Promise<UsersPage[]> => {
  const abort = new AbortController();
  const scoped: Settings = { ...settings, signal: AbortSignal.any([settings.signal, abort.signal]) };
  const tasks = Array.from({ length: to - from + 1 }, (_, offset) => () => fetchPage(pageUrl(from + offset), scoped));
  return runBounded(tasks, concurrency, abort);
};

/** Follows `next_page` links one by one (the listing gave no `count`). */
const followNextPages = async (first: UsersPage, baseUrl: string, maxPages: number, settings: Settings): Promise<UsersPage[]> => {
  const pages: UsersPage[] = [];
  const seen = new Set<string>();
  const origin = new URL(baseUrl).origin;
  let link = first.nextPage;
  while (link !== null) {
    if (pages.length + 1 >= maxPages) throw new TicketingListingError(`User listing has more than ${maxPages} pages; giving up`);
    let url: URL;
    try {
      url = new URL(link, baseUrl);
    } catch {
      throw new TicketingListingError('User listing gave a next_page that is not a URL');
    }
    // Basic credentials go only to the configured host.
    if (url.origin !== origin) throw new TicketingListingError(`User listing's next_page points to another origin (${url.origin})`);
    if (seen.has(url.href)) throw new TicketingListingError(`User listing's next_page loops back to ${redactUrl(url.href)}`);
    seen.add(url.href);
    const page = await fetchPage(url.href, settings);
    pages.push(page);
    link = page.nextPage;
  }
  return pages;
};

/**
 * Every user the destination already holds, keyed by email key (email-key.ts; the first listing entry of an
 * email wins). All pages or an error: a partial map would silently keep row ids the destination
 * would reject as duplicates.
 */
export const fetchDestinationUsers = async (options: FetchDestinationUsersOptions): Promise<DestinationUsers> => {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const maxPages = options.maxPages ?? 10_000;
  const backoffMs = options.backoffMs ?? 500;
  const settings: Settings = {
    authorization: `Basic ${Buffer.from(`${options.username}:${options.password}`).toString('base64')}`,
    timeoutMs: options.timeoutMs ?? 15_000,
    maxRetries: options.maxRetries ?? 3,
    // No jitter: a run's few pages in flight are not a crowd, and a wait named in a budget message is exact.
    backoff: { baseMs: backoffMs, maxMs: backoffMs * 2 ** MAX_BACKOFF_DOUBLINGS },
    maxRateLimitWaitMs: options.maxRateLimitWaitMs ?? 120_000,
    sleep: options.sleep ?? defaultSleep,
    signal: options.signal ?? new AbortController().signal,
    rateLimitWaited: { ms: 0 },
  };
  const pageUrl = (page: number) => `${baseUrl}/api/v1/users.json?page=${page}`;
  /** Every page once, or how the listing shrank when a later page's `count` is below page 1's. */
  const readListing = async (): Promise<{ pages: UsersPage[] } | { shrank: string }> => {
    const first = await fetchPage(pageUrl(1), settings);
    const { count } = first;
    if (count === undefined) return { pages: [first, ...(await followNextPages(first, baseUrl, maxPages, settings))] };
    const lastPage = Math.max(1, Math.ceil(count / PAGE_SIZE));
    if (lastPage > maxPages) throw new TicketingListingError(`User listing claims ${count} users, more than ${maxPages} pages`);
    const rest = lastPage === 1 ? [] : await fetchPagesConcurrently(pageUrl, 2, lastPage, options.concurrency ?? 4, settings);
    const shrunk = rest.find((page) => page.count !== undefined && page.count < count);
    return shrunk === undefined ? { pages: [first, ...rest] } : { shrank: `from ${count} to ${String(shrunk.count)} users` };
  };
  // A user removed during the read moves every later user one place up, so one could fall between
  // two pages already read; such a read is thrown away and the listing read again, a bounded number
  // of times. (A user added only repeats one on the next page, and the first entry of an email counts.)
  let read = await readListing();
  for (let again = 1; 'shrank' in read && again <= LISTING_REREADS; again += 1) read = await readListing();
  if ('shrank' in read) {
    throw new TicketingListingError(`User listing kept losing users while it was read (${LISTING_REREADS + 1} reads; the last went ${read.shrank}); run the import again when it is quiet`);
  }
  const users: DestinationUsers = new Map();
  for (const page of read.pages) {
    for (const user of page.users) {
      const email = user.email?.trim();
      const key = email ? emailKey(email) : undefined;
      if (key !== undefined && !users.has(key)) users.set(key, user.id);
    }
  }
  return users;
};
