import { singleFlight } from '../async/single-flight.ts';
import { describeError } from '../errors.ts';
import { makeStateLog, type HealthLogger } from '../runtime/health-logger.ts';
import { callUpstream, redactUrl } from '../upstream/upstream-call.ts';
import { feedReference, fixedReference, type FeedMatch, type LatestReference } from './latest-reference.ts';
import { sofaReleases } from './sofa-feed.ts';

export interface LatestOsSourceOptions {
  /** A SOFA-format feed (`LATEST_OS_FEED_URL`, `LATEST_IOS_FEED_URL`); undefined: `fallbackVersion` alone decides. */
  feedUrl: string | undefined;
  /** `LATEST_OS_VERSION` (`LATEST_IOS_VERSION`): for majors the feed does not list, and while no feed copy exists. */
  fallbackVersion: string | undefined;
  /** Which SOFA feed: macOS (default; devices matched by board id) or iOS (matched by product type). */
  system?: 'macOS' | 'iOS';
  /** How long a fetched feed is kept (`LATEST_OS_FEED_TTL_SECONDS`). */
  ttlMs: number;
  logger: HealthLogger;
  /** The most one fetch may take; a request waits for it only once per TTL (or retry interval). */
  timeoutMs?: number;
  /** After a failed fetch, how long the last good copy (or the fallback) serves before another try. */
  retryMs?: number;
  now?: () => number;
}

/** What serves the latest-OS decision: the feed, its last good copy, or the fixed version's variable. */
type Serving = 'feed' | 'last good copy' | 'LATEST_OS_VERSION' | 'LATEST_IOS_VERSION';

/** Each feed's fixed version and how its devices are matched. */
const SYSTEMS = {
  macOS: { fixed: 'LATEST_OS_VERSION', match: 'board' },
  iOS: { fixed: 'LATEST_IOS_VERSION', match: 'product-type' },
} as const satisfies Record<string, { fixed: Serving; match: FeedMatch }>;

const FEED_TIMEOUT_MS = 3_000;
const RETRY_MS = 60_000;

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
export const makeLatestOsSource = (options: LatestOsSourceOptions): (() => Promise<LatestReference>) => {
  const fallback = fixedReference(options.fallbackVersion);
  const system = options.system ?? 'macOS';
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

  const fetchReference = async (): Promise<LatestReference> => {
    // The feed is public and sent no credentials: a mirror or static host that redirects is followed.
    const response = await callUpstream(feedUrl, { headers: { accept: 'application/json' }, redirect: 'follow' }, { timeoutMs }).catch(
      (cause: unknown) => {
        throw new FeedUnavailableError(describeError(cause), { cause });
      },
    );
    if (response.status !== 200) throw new FeedUnavailableError(`${shown} answered HTTP ${response.status}`);
    let feed: unknown;
    try {
      feed = JSON.parse(response.text);
    } catch {
      throw new FeedUnavailableError(`${shown} sent a body that is not JSON`);
    }
    const releases = sofaReleases(feed);
    if (typeof releases === 'string') throw new FeedUnavailableError(`${shown} is not a SOFA ${system} feed: ${releases}`);
    return feedReference(releases, options.fallbackVersion, SYSTEMS[system].match);
  };

  const refresh = async (): Promise<void> => {
    try {
      good = { reference: await fetchReference(), fetchedAt: now() };
      failedAt = undefined;
      serving.set('feed');
    } catch (error) {
      failedAt = now();
      serving.set(good === undefined ? SYSTEMS[system].fixed : 'last good copy', error);
    }
  };

  const flight = singleFlight(refresh);

  return async () => {
    const at = now();
    const due = (good === undefined || at >= good.fetchedAt + options.ttlMs) && (failedAt === undefined || at >= failedAt + retryMs);
    if (due) await flight.run();
    return good?.reference ?? fallback;
  };
};
