import { redactUrl } from '../upstream/upstream-call.ts';
import { fetchPage, followable } from './listing-page.ts';
import type { Settings } from './listing-pacing.ts';
import { TicketingListingError } from './ticketing-error.ts';
import type { UsersPage } from './users-page.ts';

/** The listing's fixed page size. */
export const PAGE_SIZE = 100;

/** Cursor paging: the first page, then each `links.next` until `meta.has_more` is false, one at a time. */
export const readByCursor = async (baseUrl: string, maxPages: number, settings: Settings): Promise<UsersPage[]> => {
  const pages: UsersPage[] = [];
  const seen = new Set<string>();
  const cursors = new Set<string>();
  let url = `${baseUrl}/api/v1/users.json?page[size]=${PAGE_SIZE}`;
  for (;;) {
    if (pages.length >= maxPages) throw new TicketingListingError(`User listing has more than ${maxPages} pages; giving up`);
    seen.add(new URL(url).href);
    const page = await fetchPage(url, settings);
    if (page.cursor === undefined) {
      throw new TicketingListingError(
        `User listing ${redactUrl(url)} answered without cursor paging's "meta.has_more": the destination does not page by cursor (TICKETING_PAGINATION=pages reads it by page number)`,
      );
    }
    pages.push(page);
    if (!page.cursor.hasMore) return pages;
    // A cursor that leads back to a page already read would never end.
    const { afterCursor } = page.cursor;
    if (afterCursor !== null && cursors.has(afterCursor))
      throw new TicketingListingError(`User listing's cursor repeats: ${redactUrl(url)} gives the after_cursor of a page already read`);
    if (afterCursor !== null) cursors.add(afterCursor);
    if (page.cursor.next === null)
      throw new TicketingListingError(`User listing ${redactUrl(url)} says it has more users ("meta.has_more") but gives no "links.next"`);
    const next = followable(page.cursor.next, baseUrl, 'links.next');
    if (seen.has(next.href))
      throw new TicketingListingError(
        `User listing's cursor repeats: links.next of ${redactUrl(url)} leads back to ${redactUrl(next.href)}, already read`,
      );
    url = next.href;
  }
};
