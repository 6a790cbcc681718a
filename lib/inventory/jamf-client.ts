import { fetchPages, readWhileShrinking, type PagedRead } from '../upstream/paged-read.ts';
import { callJamf, loggableBase, parseJsonBody, statusError } from './jamf-call.ts';
import { excerpt, type BodyCap, type CallLimits } from '../upstream/upstream-call.ts';
import { makeRetryTally, UPSTREAM_RETRY, type RetryContext, type RetryPolicy, type RetrySummary } from '../upstream/upstream-retry.ts';
import type { Deadline } from '../async/deadline.ts';
import { mapIdentified, sortedUniqueById, type RecordMapper } from './record-id.ts';
import { UpstreamError, UpstreamFailure } from './upstream-error.ts';
import { afterNotFound, makeVersionedEndpoint, type JamfInventoryEndpoint } from './jamf-endpoints.ts';
import {
  FilterRefusedError,
  makeTokenSource,
  withReauthentication,
  type JamfAuth,
  type JamfPage,
  type JamfPageResult,
  type PageReader,
} from './jamf-auth.ts';

/**
 * Records per inventory page. Jamf silently clamps above 2000, and with four sections a 2000-record
 * page is several MB that Jamf Cloud can take many seconds to build; 1000 keeps each request well
 * inside its timeout while a fleet of up to 5000 still needs only page 0 and one concurrent round.
 */
export const JAMF_PAGE_SIZE = 1000;
/** Inventory requests in flight at once; Jamf advises at most 5 connections per API client. */
export const JAMF_CONCURRENCY = 4;
/** The most any single upstream request may take; the read's overall deadline applies as well. */
const JAMF_REQUEST_TIMEOUT_MS = 10_000;
/** A 1000-record page of four sections is a few MB; one past this is not a page this service can hold. */
const JAMF_PAGE_CAP: BodyCap = { name: 'a Jamf page', bytes: 64 * 1024 * 1024 };
/** A `totalCount` needing more pages than this is not believed (a million devices at full pages). */
const MAX_PAGES = 10_000;
/** Whole reads tried while devices keep being removed under them (see `readInventory`). */
const MAX_READS = 3;

/** What a read of the changes found: the records Jamf dates as changed, and the whole inventory's size. */
export type InventoryChanges<T> = { kind: 'changes'; changed: T[]; totalCount: number } | { kind: 'filter-refused'; detail: string };

export interface JamfClientOptions {
  baseUrl: string;
  auth: JamfAuth;
  /** Which inventory the client reads: always named, so a forgotten one is a type error, not computers. */
  inventory: JamfInventoryEndpoint;
  /** Called once per token upstream refused (a 401 on an inventory page): the auth-failure metric. */
  onAuthFailure?: () => void;
  /** Called once per retried attempt of a token or page request (the UpstreamRetries metric). */
  onRetry?: () => void;
  /** Called once at the end of a read that retried anything: its one log line. */
  onRetried?: (summary: RetrySummary) => void;
  /** How transient failures are retried; default UPSTREAM_RETRY (tests shorten the waits). */
  retry?: RetryPolicy;
  pageSize?: number;
  concurrency?: number;
  requestTimeoutMs?: number;
}

export interface JamfClient {
  /**
   * Every record of the inventory (computers, or mobile devices) through `map`, each id once (the first record read wins), in
   * ascending numeric id order; all or nothing. Records are mapped as their page arrives, so a read
   * of a large fleet never holds the raw records of all pages at once; `map` returns undefined for
   * a record to leave out. `deadline` bounds the whole read, its retries included.
   */
  readInventory: <T>(deadline: Deadline, map: RecordMapper<T>) => Promise<T[]>;
  /**
   * The records Jamf dates as changed at or after `since` (ms, to the second below) by the dates
   * the endpoint's `changedFilter` names: the same pages as `readInventory` with that RSQL filter,
   * read the same way; and the whole inventory's `totalCount`, from one request of one record (the
   * probe) sent beside the first filtered page, under the same token. `filter-refused` when Jamf
   * answers the filter 400.
   */
  readChanges: <T>(deadline: Deadline, map: RecordMapper<T>, since: number) => Promise<InventoryChanges<T>>;
}

const inventoryQuery = (endpoint: JamfInventoryEndpoint, page: number, pageSize: number): string =>
  `${endpoint.sections.map((section) => `section=${section}`).join('&')}&sort=${endpoint.idField}:asc&page=${page}&page-size=${pageSize}`;

/** An ISO 8601 UTC instant in whole seconds (the second `ms` falls in), as RSQL compares dates. */
const instantOf = (ms: number): string => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');

const asPage = (body: unknown): JamfPage | undefined => {
  if (typeof body !== 'object' || body === null) return undefined;
  const { totalCount, results } = body as Record<string, unknown>;
  if (typeof totalCount !== 'number' || !Number.isSafeInteger(totalCount) || totalCount < 0 || !Array.isArray(results)) return undefined;
  return { totalCount, results };
};

export const makeJamfClient = (options: JamfClientOptions): JamfClient => {
  const pageSize = options.pageSize ?? JAMF_PAGE_SIZE;
  const concurrency = options.concurrency ?? JAMF_CONCURRENCY;
  const endpoint = options.inventory;
  const policy = options.retry ?? UPSTREAM_RETRY;
  const limitsOf = (signal: AbortSignal): CallLimits => ({
    signal,
    timeoutMs: options.requestTimeoutMs ?? JAMF_REQUEST_TIMEOUT_MS,
    bodyCap: JAMF_PAGE_CAP,
  });

  // Both live as long as the client, one per container: which paths this Jamf Pro has is learnt once.
  const tokenOf = makeTokenSource(options.baseUrl, options.auth);
  const inventoryPath = makeVersionedEndpoint(endpoint.paths);

  /**
   * Page `page` of `size` records; with `since` (an instant), only the records changed since then.
   * Each request is retried on its own (`retry`): the pages already read are never asked again.
   */
  const fetchPage = async (
    retry: RetryContext,
    token: string,
    page: number,
    size: number,
    signal: AbortSignal,
    since?: string,
  ): Promise<JamfPageResult> => {
    const labelOf = (path: string) =>
      `GET ${loggableBase(options.baseUrl)}${path} page ${page} (page-size ${size}${since === undefined ? '' : `, changed since ${since}`})`;
    // The filter names the path's own fields, so a container that has not yet learnt its version asks each rightly.
    const queryOf = (path: string) =>
      since === undefined
        ? inventoryQuery(endpoint, page, size)
        : `${inventoryQuery(endpoint, page, size)}&filter=${encodeURIComponent(endpoint.changedFilter(path, since))}`;
    const answer = await inventoryPath.send((path) =>
      callJamf(
        labelOf(path),
        `${options.baseUrl}${path}?${queryOf(path)}`,
        { headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' } },
        limitsOf(signal),
        retry,
      ),
    );
    const { response } = answer;
    const label = `${labelOf(answer.path)}${afterNotFound(answer.notFound)}`;
    // An error page may repeat the request, bearer token included: it is hidden in every excerpt.
    const origin = { hiding: [token] };
    if (response.status === 401)
      return { kind: 'token-rejected', detail: `${label} answered 401: ${excerpt(response.text, origin.hiding)}` };
    if (response.status === 400 && since !== undefined)
      return { kind: 'filter-refused', detail: `${label} answered 400: ${excerpt(response.text, origin.hiding)}` };
    if (response.status !== 200) throw statusError(label, response, origin, { known: answer.known });
    inventoryPath.answered(answer.path);
    const parsed = asPage(parseJsonBody(label, response, origin));
    if (parsed === undefined) {
      throw new UpstreamError(UpstreamFailure.Unreadable, {
        detail: `${label} sent JSON without totalCount and results: ${excerpt(response.text, origin.hiding)}`,
      });
    }
    return { kind: 'page', page: parsed };
  };

  /** A page's records through `map`, keyed by their id; records without a usable id are dropped. */
  const mapped = <T>(page: JamfPage, map: RecordMapper<T>): { id: string; value: T }[] => {
    const entries: { id: string; value: T }[] = [];
    for (const record of page.results) {
      const entry = mapIdentified(record, endpoint.idField, map);
      if (entry !== undefined) entries.push(entry);
    }
    return entries;
  };

  /**
   * Every page once, or `shrank` when `totalCount` fell during the read (a device removed: see
   * lib/upstream/paged-read.ts). Enrolled devices take new, higher ids, so they only add pages at the
   * end: the rounds go on while `totalCount` grows.
   */
  const readOnce = async <T>(
    pageOf: PageReader,
    abort: AbortController,
    signal: AbortSignal,
    map: RecordMapper<T>,
  ): Promise<PagedRead<T[]>> => {
    const first = await pageOf(0, pageSize, signal);
    // Fewer records than asked while more exist: upstream clamped the page size; use its size.
    const effective = first.results.length < pageSize && first.totalCount > first.results.length ? first.results.length : pageSize;
    if (effective === 0 && first.totalCount > 0) {
      throw new UpstreamError(UpstreamFailure.Unreadable, { detail: `page 0 was empty but totalCount is ${first.totalCount}` });
    }
    // Per page, in page order: received counts and mapped entries (the raw records are let go).
    const received: number[] = [first.results.length];
    const totals: number[] = [first.totalCount];
    const entries: { id: string; value: T }[][] = [mapped(first, map)];
    let totalCount = first.totalCount;
    // In the order the pages arrive: a count below one already seen means devices were removed.
    let highestCount = first.totalCount;
    for (let round = 0; round < MAX_PAGES; round += 1) {
      const pageCount = effective === 0 ? 1 : Math.ceil(totalCount / effective);
      if (pageCount > MAX_PAGES) {
        throw new UpstreamError(UpstreamFailure.Unreadable, { detail: `totalCount ${totalCount} needs more than ${MAX_PAGES} pages` });
      }
      if (pageCount <= received.length) break;
      const from = received.length;
      const outcome = await fetchPages<JamfPage>({
        indexes: Array.from({ length: pageCount - from }, (_, offset) => from + offset),
        concurrency,
        signal,
        abort,
        fetch: (page, pageSignal) => pageOf(page, effective, pageSignal),
        take: (page, answer) => {
          const fell = answer.totalCount < highestCount;
          highestCount = Math.max(highestCount, answer.totalCount);
          received[page] = answer.results.length;
          totals[page] = answer.totalCount;
          entries[page] = mapped(answer, map);
          return fell ? 'shrank' : 'taken';
        },
      });
      if (outcome === 'shrank') return { kind: 'shrank', detail: `totalCount fell below ${highestCount}` };
      totalCount = Math.max(totalCount, ...totals);
    }
    // A page cut short (not the clamping of page 0, which `effective` absorbed) would drop devices
    // silently. Counts only grew (enrollments); the smallest is what every page had to hold.
    const receivedCount = received.reduce((sum, count) => sum + count, 0);
    const expected = Math.min(...totals);
    if (receivedCount < expected) {
      throw new UpstreamError(UpstreamFailure.Unreadable, {
        detail: `pages held ${receivedCount} records but totalCount says ${expected}: a page came back short`,
      });
    }
    return { kind: 'whole', value: sortedUniqueById(entries.flat()) };
  };

  /** Every page, read again while devices keep being removed under the read (see `readOnce`). */
  const readPages = <T>(pageOf: PageReader, abort: AbortController, signal: AbortSignal, map: RecordMapper<T>): Promise<T[]> =>
    readWhileShrinking(
      MAX_READS,
      () => readOnce(pageOf, abort, signal, map),
      (_detail, reads) =>
        new UpstreamError(UpstreamFailure.Unreadable, {
          detail: `devices were removed during each of ${reads} reads of the inventory; a page read after a removal may have skipped a device`,
        }),
    );

  /**
   * One read: its signal (its deadline, or a failed page), its token (renewed only when upstream
   * refuses it), and its retries, counted across its requests and summed up once when it ends.
   */
  const read = async <R>(
    deadline: Deadline,
    work: (started: { abort: AbortController; signal: AbortSignal; pageOf: ReturnType<typeof withReauthentication> }) => Promise<R>,
  ): Promise<R> => {
    const abort = new AbortController();
    const signal = AbortSignal.any([deadline.signal, abort.signal]);
    const retry: RetryContext = { policy, deadlineAt: deadline.at, tally: makeRetryTally(options.onRetry) };
    const pageOf = withReauthentication({
      authenticate: (tokenSignal) => tokenOf({ signal: tokenSignal, timeoutMs: limitsOf(tokenSignal).timeoutMs }, retry),
      fetchPage: (...args) => fetchPage(retry, ...args),
      onAuthFailure: options.onAuthFailure,
      signal,
    });
    try {
      return await work({ abort, signal, pageOf });
    } finally {
      const summary = retry.tally.summary();
      if (summary !== undefined) options.onRetried?.(summary);
    }
  };

  const readInventory = <T>(deadline: Deadline, map: RecordMapper<T>): Promise<T[]> =>
    read(deadline, ({ abort, signal, pageOf }) => readPages(pageOf, abort, signal, map));

  /**
   * The changed records' pages and, beside page 0 under the same token, the probe: one unfiltered
   * record, for the inventory's size. Jamf builds the two answers at once rather than one after the
   * other. The later pages start once the probe has answered, so no more than `concurrency` requests
   * are ever in flight. The first failure of either cancels the other and is the read's; a refused
   * filter is reported once the probe has answered, so a failed probe fails the read as it did when
   * it went first.
   */
  const readChanges = <T>(deadline: Deadline, map: RecordMapper<T>, since: number): Promise<InventoryChanges<T>> =>
    read(deadline, async ({ abort, signal, pageOf }) => {
      const instant = instantOf(since);
      let failure: { error: unknown } | undefined;
      const failed = (error: unknown): undefined => {
        if (failure === undefined) {
          failure = { error };
          abort.abort(error);
        }
        return undefined;
      };
      const counting = pageOf(0, 1, signal).then((page) => page.totalCount, failed);
      const changedPageOf: PageReader = async (page, size, pageSignal) => {
        if (page > 0) await counting;
        return pageOf(page, size, pageSignal, instant);
      };
      const changing = readPages(changedPageOf, abort, signal, map).then(
        (changed) => ({ kind: 'changes', changed }) as const,
        (error: unknown) =>
          error instanceof FilterRefusedError ? ({ kind: 'filter-refused', detail: error.message } as const) : failed(error),
      );
      const [totalCount, changes] = await Promise.all([counting, changing]);
      // Either is undefined only when it failed, and then a failure was kept.
      if (totalCount === undefined || changes === undefined) throw failure!.error;
      return changes.kind === 'changes' ? { ...changes, totalCount } : changes;
    });

  return { readInventory, readChanges };
};
