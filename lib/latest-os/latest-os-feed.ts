import { singleFlight } from '../async/once.ts';
import { describeError } from '../errors.ts';
import { makeStateLog, type HealthLogger } from '../runtime/logger.ts';
import { redactUrl, type BodyCap } from '../upstream/upstream-call.ts';
import { callUpstreamRetrying, makeRetryTally, retryFields, UPSTREAM_RETRY, type RetryPolicy } from '../upstream/upstream-retry.ts';
import { feedReference, fixedReference, type FeedMatch, type LatestReference } from './latest-reference.ts';
import type { ServiceLevels } from './patch-compliance.ts';
import { sofaReleases } from './sofa-feed.ts';

export interface LatestOsSourceOptions {
  /** A SOFA-format feed (`LATEST_OS_FEED_URL`, `LATEST_IOS_FEED_URL`, `LATEST_TVOS_FEED_URL`); undefined: `fallbackVersion` alone decides. */
  feedUrl: string | undefined;
  /** `LATEST_OS_VERSION` (`LATEST_IOS_VERSION`, `LATEST_TVOS_VERSION`): for majors the feed does not list, and while no feed copy exists. */
  fallbackVersion: string | undefined;
  /** Which SOFA feed: macOS (devices matched by board id), iOS or tvOS (matched by product type). */
  system: LatestOsSystem;
  /** The patch service levels of the feed's due dates (PATCH_SLA_*); default DEFAULT_SERVICE_LEVELS. */
  levels?: ServiceLevels;
  /** How long a fetched feed is kept (`LATEST_OS_FEED_TTL_SECONDS`). */
  ttlMs: number;
  logger: HealthLogger;
  /** The most one fetch may take; a request waits for it only once per TTL (or retry interval). */
  timeoutMs?: number;
  /** After a failed fetch, how long the last good copy (or the fallback) serves before another try. */
  retryMs?: number;
  /** How a fetch's transient failures are retried within it; default UPSTREAM_RETRY (tests shorten the waits). */
  retry?: RetryPolicy;
  /** The most one fetch, its retries included, may take (default 10 s), within the request's own time. */
  budgetMs?: number;
  /** Called once per retried attempt (the UpstreamRetries metric). */
  onRetry?: () => void;
  now?: () => number;
}

/** What a request that waits for the feed tells it: the time left in its invocation. */
export interface FeedRequest {
  remainingTimeMs: () => number;
}

/** Which SOFA feed a reference reads: each system has its own (docs/api.md#os_is_latest). */
export type LatestOsSystem = 'macOS' | 'iOS' | 'tvOS';

/** What serves the latest-OS decision: the feed, its last good copy, or the fixed version's variable. */
type Serving = 'feed' | 'last good copy' | 'LATEST_OS_VERSION' | 'LATEST_IOS_VERSION' | 'LATEST_TVOS_VERSION';

/** Each feed's fixed version and how its devices are matched. */
const SYSTEMS = {
  macOS: { fixed: 'LATEST_OS_VERSION', match: 'board' },
  iOS: { fixed: 'LATEST_IOS_VERSION', match: 'product-type' },
  tvOS: { fixed: 'LATEST_TVOS_VERSION', match: 'product-type' },
} as const satisfies Record<LatestOsSystem, { fixed: Serving; match: FeedMatch }>;

const FEED_TIMEOUT_MS = 3_000;
const RETRY_MS = 60_000;
/** A fetch with its retries never holds a request longer than this (three timed-out attempts at most). */
const FEED_BUDGET_MS = 10_000;
/** Left of the request's time once the feed gives up: the list is still answered, from the fallback. */
const FEED_MARGIN_MS = 1_000;
/** The SOFA macOS feed is a few MB; one past this is not the feed. */
const FEED_BODY_CAP: BodyCap = { name: 'a feed', bytes: 32 * 1024 * 1024 };

/** The feed could not be read, or is not a SOFA feed (treated the same). */
class FeedUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'FeedUnavailableError';
  }
}

/**
 * The latest-OS reference of the devices function: the SOFA feed's releases, fetched
 * with a timeout and kept for its TTL; when it cannot be fetched (or is in another shape), its last
 * good copy; with none, LATEST_OS_VERSION. Never fails a request. One line per change of what serves
 * the decision: a warning when the feed stops serving, an info line when it serves again.
 */
export const makeLatestOsSource = (options: LatestOsSourceOptions): ((request?: FeedRequest) => Promise<LatestReference>) => {
  const fallback = fixedReference(options.fallbackVersion);
  const { system } = options;
  const { feedUrl } = options;
  if (feedUrl === undefined) return async () => fallback;
  const now = options.now ?? Date.now;
  const timeoutMs = options.timeoutMs ?? FEED_TIMEOUT_MS;
  const retryMs = options.retryMs ?? RETRY_MS;
  const shown = redactUrl(feedUrl);
  let good: { reference: LatestReference; fetchedAt: number } | undefined;
  let failedAt: number | undefined;
  // One line per change of what serves the decision: a warning when the feed stops, info when it serves again.
  const serving = makeStateLog<Serving>('feed', (next, previous, error) => {
    if (next === 'feed') options.logger.info('latest OS feed recovered', { feed: shown, serving: next, was: previous });
    else options.logger.warn('latest OS feed unavailable', { feed: shown, serving: next, error: describeError(error) });
  });

  const fetchReference = async (request: FeedRequest | undefined): Promise<LatestReference> => {
    // Real time, whatever clock decides the TTL: the deadline bounds waits that really happen.
    const budgetMs = Math.min(options.budgetMs ?? FEED_BUDGET_MS, (request?.remainingTimeMs() ?? Infinity) - FEED_MARGIN_MS);
    const tally = makeRetryTally(options.onRetry);
    const retry = { policy: options.retry ?? UPSTREAM_RETRY, deadlineAt: Date.now() + budgetMs, tally };
    try {
      // The feed is public and sent no credentials: a mirror or static host that redirects is followed.
      const init: RequestInit = { headers: { accept: 'application/json' }, redirect: 'follow' };
      return parseReference(await callUpstreamRetrying(feedUrl, init, { timeoutMs, bodyCap: FEED_BODY_CAP }, retry));
    } catch (cause) {
      if (cause instanceof FeedUnavailableError) throw cause;
      throw new FeedUnavailableError(describeError(cause), { cause });
    } finally {
      const summary = tally.summary();
      // One line per fetch that retried, beside the state lines: the feed had a bad moment.
      if (summary !== undefined) options.logger.warn('upstream retried', { upstream: 'sofa', feed: shown, ...retryFields(summary) });
    }
  };

  const parseReference = (response: { status: number; text: string }): LatestReference => {
    if (response.status !== 200) throw new FeedUnavailableError(`${shown} answered HTTP ${response.status}`);
    let feed: unknown;
    try {
      feed = JSON.parse(response.text);
    } catch {
      throw new FeedUnavailableError(`${shown} sent a body that is not JSON`);
    }
    const releases = sofaReleases(feed);
    if (typeof releases === 'string') throw new FeedUnavailableError(`${shown} is not a SOFA ${system} feed: ${releases}`);
    return feedReference(releases, options.fallbackVersion, SYSTEMS[system].match, options.levels);
  };

  const refresh = async (request: FeedRequest | undefined): Promise<void> => {
    try {
      good = { reference: await fetchReference(request), fetchedAt: now() };
      failedAt = undefined;
      serving.set('feed');
    } catch (error) {
      failedAt = now();
      serving.set(good === undefined ? SYSTEMS[system].fixed : 'last good copy', error);
    }
  };

  const flight = singleFlight(refresh);

  return async (request) => {
    const at = now();
    const due = (good === undefined || at >= good.fetchedAt + options.ttlMs) && (failedAt === undefined || at >= failedAt + retryMs);
    // The request that starts a fetch bounds it; one that joins a fetch in flight waits for it.
    if (due) await flight.run(request);
    return good?.reference ?? fallback;
  };
};
