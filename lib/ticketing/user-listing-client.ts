import { setTimeout as delay } from 'node:timers/promises';
import { emailKey } from '../users/email-key.ts';
import { fetchPages, readWhileShrinking, type PagedRead } from '../upstream/paged-read.ts';
import { redactUrl } from '../upstream/upstream-call.ts';
import { PAGE_SIZE, readByCursor } from './listing-cursor.ts';
import { fetchPage, followable, PageStatusError } from './listing-page.ts';
import type { Settings } from './listing-pacing.ts';
import { TicketingListingError } from './ticketing-error.ts';
import type { UsersPage } from './users-page.ts';
/** How often a listing that changed while it was read is read again before the run gives up. */
const LISTING_REREADS = 2;
/** Zendesk answers page-number paging past 10,000 records (page 100) with a 400 (InvalidPaginationDepth). */
const DEEPEST_NUMBERED_PAGE = 100;

/**
 * `pages`: by page number (`?page=N`), in parallel, switching to cursor paging if a page past 100 is
 * refused; `cursor`: by cursor (`?page[size]=100`, then `links.next`), one page after the other.
 */
export type ListingPagination = 'pages' | 'cursor';

export interface FetchDestinationUsersOptions {
  baseUrl: string;
  username: string;
  password: string;
  /** How the listing is paged (default `pages`). */
  pagination?: ListingPagination;
  /** Told, in one line, when a read by page number switches to cursor paging. */
  notify?: (message: string) => void;
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
   * Total time one listing read may spend waiting on its rate limit (429 answers, and resets named
   * by `X-Rate-Limit-Remaining: 0`), across all pages (default 120 s). Bounded so a throttled listing
   * cannot hold an import (or a Lambda) indefinitely; a wait that would overrun it fails at once with
   * the wait and what is left, rather than sleep in vain.
   */
  maxRateLimitWaitMs?: number;
  /** Guards against a listing that never ends (a `count`, `next_page` or cursor chain gone wrong). */
  maxPages?: number;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** The clock the rate-limit waits are measured with (tests pair it with `sleep`). */
  now?: () => number;
  signal?: AbortSignal;
}

/** Email key (lib/users/email-key.ts) → the destination's user id (exact decimal text): what the listing gives the import. */
export type DestinationUsers = ReadonlyMap<string, string>;

/**
 * A page's backoff stops growing at 2^6 = 64 × backoffMs (32 s by default): a page throttled without
 * Retry-After keeps trying every 32 s while the wait budget lasts, instead of soon asking for a wait
 * that overruns it.
 */
const MAX_BACKOFF_DOUBLINGS = 6;

const defaultSleep = (ms: number, signal: AbortSignal) => delay(ms, undefined, { signal });

/** The destination refused page-number paging this deep: the read starts again with cursors. */
class NumberedPagingRefused extends TicketingListingError {
  readonly page: number;
  constructor(page: number, cause: unknown) {
    super(`User listing refused page ${page} (HTTP 400)`, cause);
    this.page = page;
  }
}

/** Page `page` by its number; a 400 past page 100 is the destination refusing page-number paging that deep. */
const fetchNumberedPage = async (url: string, page: number, settings: Settings): Promise<UsersPage> => {
  try {
    return await fetchPage(url, settings);
  } catch (error) {
    if (page > DEEPEST_NUMBERED_PAGE && error instanceof PageStatusError && error.status === 400)
      throw new NumberedPagingRefused(page, error);
    throw error;
  }
};

/**
 * Reads the numbered pages with at most `concurrency` requests in flight, returned in page order;
 * any page failing fails all. The first page past 100 goes first, so a destination that refuses
 * page-number paging that deep (Zendesk) says so before the pages below it are read for nothing.
 */
const fetchPagesConcurrently = async (
  pageUrl: (page: number) => string,
  numbers: readonly number[],
  concurrency: number,
  settings: Settings,
): Promise<UsersPage[]> => {
  const deep = numbers.findIndex((page) => page > DEEPEST_NUMBERED_PAGE);
  const order = deep > 0 ? [numbers[deep]!, ...numbers.slice(0, deep), ...numbers.slice(deep + 1)] : [...numbers];
  const byNumber = new Map<number, UsersPage>();
  await fetchPages<UsersPage>({
    indexes: order,
    concurrency,
    signal: settings.signal,
    fetch: (page, signal) => fetchNumberedPage(pageUrl(page), page, { ...settings, signal }),
    // Whether the listing shrank is told by the whole read's counts (readByNumber).
    take: (page, users) => {
      byNumber.set(page, users);
      return 'taken';
    },
  });
  return numbers.map((page) => byNumber.get(page)!);
};

/** Follows `next_page` links one by one (the listing gave no `count`). */
const followNextPages = async (first: UsersPage, baseUrl: string, maxPages: number, settings: Settings): Promise<UsersPage[]> => {
  const pages: UsersPage[] = [];
  const seen = new Set<string>();
  let link = first.nextPage;
  while (link !== null) {
    if (pages.length + 1 >= maxPages) throw new TicketingListingError(`User listing has more than ${maxPages} pages; giving up`);
    const url = followable(link, baseUrl, 'next_page');
    if (seen.has(url.href)) throw new TicketingListingError(`User listing's next_page loops back to ${redactUrl(url.href)}`);
    seen.add(url.href);
    // The link's own page number where it gives one, else its place in the chain.
    const named = Number(url.searchParams.get('page'));
    const page = await fetchNumberedPage(url.href, Number.isSafeInteger(named) && named > 0 ? named : pages.length + 2, settings);
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
  const concurrency = options.concurrency ?? 4;
  const settings: Settings = {
    authorization: `Basic ${Buffer.from(`${options.username}:${options.password}`).toString('base64')}`,
    timeoutMs: options.timeoutMs ?? 15_000,
    maxRetries: options.maxRetries ?? 3,
    // No jitter: a run's few pages in flight are not a crowd, and a wait named in a budget message is exact.
    backoff: { baseMs: backoffMs, maxMs: backoffMs * 2 ** MAX_BACKOFF_DOUBLINGS },
    maxRateLimitWaitMs: options.maxRateLimitWaitMs ?? 120_000,
    sleep: options.sleep ?? defaultSleep,
    now: options.now ?? Date.now,
    signal: options.signal ?? new AbortController().signal,
    rateLimitWaited: { ms: 0 },
    pause: { until: 0, charged: 0 },
  };
  const pageUrl = (page: number) => `${baseUrl}/api/v1/users.json?page=${page}`;
  const numbered = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, offset) => from + offset);
  /** Every page once, or how the listing shrank when a later page's `count` is below page 1's. */
  const readListing = async (): Promise<PagedRead<UsersPage[]>> => {
    const first = await fetchNumberedPage(pageUrl(1), 1, settings);
    const { count } = first;
    if (count === undefined) return { kind: 'whole', value: [first, ...(await followNextPages(first, baseUrl, maxPages, settings))] };
    const lastPage = Math.max(1, Math.ceil(count / PAGE_SIZE));
    if (lastPage > maxPages) throw new TicketingListingError(`User listing claims ${count} users, more than ${maxPages} pages`);
    const pages = [first, ...(lastPage === 1 ? [] : await fetchPagesConcurrently(pageUrl, numbered(2, lastPage), concurrency, settings))];
    // A stale `count` (Zendesk caches it for up to a day) may say fewer users than there are: while
    // the last page read still has a next_page, the following pages are read too, a batch at a time,
    // up to the first that is empty or has no next_page.
    for (let next = lastPage + 1; pages.at(-1)!.nextPage !== null && pages.at(-1)!.users.length > 0;) {
      if (next > maxPages) throw new TicketingListingError(`User listing has more than ${maxPages} pages; giving up`);
      const batch = await fetchPagesConcurrently(
        pageUrl,
        numbered(next, Math.min(next + concurrency - 1, maxPages)),
        concurrency,
        settings,
      );
      const end = batch.findIndex((page) => page.users.length === 0 || page.nextPage === null);
      pages.push(...(end === -1 ? batch : batch.slice(0, end + 1)));
      if (end !== -1) break;
      next += batch.length;
    }
    const shrunk = pages.find((page) => page.count !== undefined && page.count < count);
    return shrunk === undefined
      ? { kind: 'whole', value: pages }
      : { kind: 'shrank', detail: `from ${count} to ${String(shrunk.count)} users` };
  };
  // Page numbers, read again while users are removed under the read (lib/upstream/paged-read.ts). A
  // user added only repeats one on the next page, and the first entry of an email counts.
  const readByNumber = (): Promise<UsersPage[]> =>
    readWhileShrinking(
      LISTING_REREADS + 1,
      readListing,
      (detail, reads) =>
        new TicketingListingError(
          `User listing kept losing users while it was read (${reads} reads; the last went ${detail}); run the import again when it is quiet`,
        ),
    );
  let pages: UsersPage[];
  if (options.pagination === 'cursor') pages = await readByCursor(baseUrl, maxPages, settings);
  else {
    try {
      pages = await readByNumber();
    } catch (error) {
      if (!(error instanceof NumberedPagingRefused)) throw error;
      options.notify?.(
        `User listing refused page ${error.page} (HTTP 400: no page-number paging past 10,000 users); reading it again from the start with cursor paging (TICKETING_PAGINATION=cursor starts there)`,
      );
      pages = await readByCursor(baseUrl, maxPages, settings);
    }
  }
  const users = new Map<string, string>();
  for (const page of pages) {
    for (const user of page.users) {
      const email = user.email?.trim();
      const key = email ? emailKey(email) : undefined;
      if (key !== undefined && !users.has(key)) users.set(key, user.id);
    }
  }
  return users;
};
