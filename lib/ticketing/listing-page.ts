import { backoffDelayMs } from '../async/backoff.ts';
import {
  callUpstream,
  redactUrl,
  retryAfterMs,
  UpstreamCallError,
  type BodyCap,
  type UpstreamResponse,
} from '../upstream/upstream-call.ts';
import { transientEnd } from '../upstream/upstream-retry.ts';
import { extendPause, formatWait, notePause, waitOutPause, type Settings } from './listing-pacing.ts';
import { TicketingListingError } from './ticketing-error.ts';
import { parseUsersPage, type UsersPage } from './users-page.ts';

/** A page of 100 users is tens of KB; one past this is not a page of the listing. */
const LISTING_PAGE_CAP: BodyCap = { name: 'a listing page', bytes: 16 * 1024 * 1024 };
/** A page's 429s retried at most this often, whatever the wait budget still allows. */
const RATE_LIMIT_ATTEMPTS_PER_PAGE = 20;

/** A page answered a status the reader does not handle itself. */
export class PageStatusError extends TicketingListingError {
  readonly status: number;
  constructor(message: string, status: number) {
    super(message);
    this.status = status;
  }
}

/**
 * One page of the listing, its 429s retried within the read's pacing, and its other transient ends
 * (500, 502, 503, 504, a timeout, a refused or reset connection: upstream-retry.ts) after a backoff.
 */
export const fetchPage = async (url: string, settings: Settings): Promise<UsersPage> => {
  // Credentials never reach a message: user info is stripped from any URL that is shown.
  const shown = redactUrl(url);
  let failures = 0;
  let rateLimited = 0;
  let waitedUntil = 0;
  // Each pass either returns, throws, or uses up a bounded retry (failures ≤ maxRetries, 429s ≤ the cap).
  for (;;) {
    settings.signal.throwIfAborted();
    await waitOutPause(shown, settings, waitedUntil);
    let response: UpstreamResponse;
    try {
      response = await callUpstream(
        url,
        { headers: { authorization: settings.authorization, accept: 'application/json' } },
        { signal: settings.signal, timeoutMs: settings.timeoutMs, bodyCap: LISTING_PAGE_CAP },
      );
    } catch (error) {
      settings.signal.throwIfAborted();
      // Retried as every upstream request is (upstream-retry.ts): a timeout, a refused or reset
      // connection. Anything else (a page past its cap, a host that does not resolve) fails now.
      const end = error instanceof UpstreamCallError ? transientEnd({ error }) : undefined;
      if (end === undefined)
        throw new TicketingListingError(`User listing: ${error instanceof Error ? error.message : String(error)}`, error);
      failures += 1;
      const problem = 'failure' in end && end.failure === 'timed-out' ? `timed out after ${settings.timeoutMs} ms` : 'was unreachable';
      if (failures > settings.maxRetries) throw new TicketingListingError(`User listing ${shown} ${problem} (${failures} attempts)`, error);
      await settings.sleep(backoffDelayMs(settings.backoff, failures), settings.signal);
      continue;
    }
    notePause(response.headers, settings);
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
        throw new TicketingListingError(
          `User listing ${shown} is still rate limited (HTTP 429) after ${RATE_LIMIT_ATTEMPTS_PER_PAGE} retries`,
        );
      }
      const at = settings.now();
      const retryAfter = retryAfterMs(response.headers.get('retry-after'), at);
      const wait = retryAfter ?? backoffDelayMs(settings.backoff, rateLimited);
      // No other request starts before this one's retry either; the budget counts the pause once.
      extendPause(settings, at, at + wait, (remaining) => {
        const asked = retryAfter === undefined ? `the next ${formatWait(wait)} backoff` : `Retry-After ${formatWait(wait)}`;
        return `User listing ${shown} is rate limited (HTTP 429): ${asked} exceeds the remaining ${formatWait(remaining)} of the ${formatWait(settings.maxRateLimitWaitMs)} wait budget`;
      });
      waitedUntil = at + wait;
      await settings.sleep(wait, settings.signal);
      continue;
    }
    if (transientEnd({ response }) !== undefined) {
      failures += 1;
      if (failures > settings.maxRetries)
        throw new TicketingListingError(`User listing ${shown} failed with HTTP ${response.status} (${failures} attempts)`);
      await settings.sleep(backoffDelayMs(settings.backoff, failures), settings.signal);
      continue;
    }
    // A redirect is reported, not followed: basic credentials go to the configured host only.
    throw new PageStatusError(`User listing ${shown} answered HTTP ${response.status}`, response.status);
  }
};

/** Resolves a link the listing gave; basic credentials go only to the configured host. */
export const followable = (link: string, baseUrl: string, what: string): URL => {
  let url: URL;
  try {
    url = new URL(link, baseUrl);
  } catch {
    throw new TicketingListingError(`User listing gave a ${what} that is not a URL`);
  }
  const origin = new URL(baseUrl).origin;
  if (url.origin !== origin) throw new TicketingListingError(`User listing's ${what} points to another origin (${url.origin})`);
  return url;
};
