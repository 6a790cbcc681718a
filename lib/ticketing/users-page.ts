import { canonicalInt64 } from '../values/int64.ts';
import { isPlainObject } from '../values/plain-object.ts';

/**
 * Parsing one page of `GET /api/v1/users.json`, read by page number (`count`, `next_page`) or by
 * cursor (`meta`, `links`, as Zendesk's cursor paging). Listing ids are int64: they are taken from
 * the JSON source text (the reviver's third argument, Node ≥ 21) so ids above 2^53 are never
 * rounded, and range-checked here so an id the import could never write fails as this page's
 * error, not later.
 */
export interface UsersPage {
  users: { id: string; email: string | null }[];
  count: number | undefined;
  nextPage: string | null;
  /** Present when the page carries cursor paging's `meta.has_more`. */
  cursor: CursorLinks | undefined;
}

export interface CursorLinks {
  hasMore: boolean;
  afterCursor: string | null;
  /** `links.next`: the URL of the following page. */
  next: string | null;
}

type SourceReviver = (this: unknown, key: string, value: unknown, context?: { source?: string }) => unknown;
const parseWithSource = JSON.parse as (text: string, reviver: SourceReviver) => unknown;

/** Wraps ids so a decimal string id and a numeric id stay distinguishable after parsing. */
class ExactId {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

const INTEGER_TEXT = /^-?(0|[1-9]\d*)$/;

const optionalText = (value: unknown): string | null | false =>
  value === undefined || value === null ? null : typeof value === 'string' ? value : false;

/** `meta` and `links` of a cursor page, or a string describing what is wrong with them. */
const parseCursor = (meta: unknown, links: unknown): CursorLinks | undefined | string => {
  if (meta === undefined || meta === null) return undefined;
  if (!isPlainObject(meta) || typeof meta.has_more !== 'boolean') return '"meta.has_more" is not true or false';
  const afterCursor = optionalText(meta.after_cursor);
  if (afterCursor === false) return '"meta.after_cursor" is not text';
  const next = isPlainObject(links) ? optionalText(links.next) : null;
  if (next === false) return '"links.next" is not a URL or null';
  return { hasMore: meta.has_more, afterCursor, next };
};

/** Returns the page, or a string describing what is wrong with it. */
export const parseUsersPage = (text: string): UsersPage | string => {
  let parsed: unknown;
  try {
    parsed = parseWithSource(text, (key, value, context) =>
      key === 'id' && typeof value === 'number' && context?.source !== undefined ? new ExactId(context.source) : value,
    );
  } catch {
    return 'the body is not JSON';
  }
  if (!isPlainObject(parsed) || !Array.isArray(parsed.users)) return 'the body has no "users" array';
  const { count, next_page: nextPage } = parsed;
  if (count !== undefined && count !== null && !(typeof count === 'number' && Number.isSafeInteger(count) && count >= 0)) {
    return '"count" is not a non-negative integer';
  }
  if (nextPage !== undefined && nextPage !== null && typeof nextPage !== 'string') return '"next_page" is not a URL or null';
  const cursor = parseCursor(parsed.meta, parsed.links);
  if (typeof cursor === 'string') return cursor;
  const users: UsersPage['users'] = [];
  for (const [index, user] of parsed.users.entries()) {
    if (!isPlainObject(user)) return `users[${index}] is not an object`;
    const id = user.id instanceof ExactId ? user.id.text : undefined;
    if (id === undefined || !INTEGER_TEXT.test(id)) return `users[${index}].id is not an integer`;
    const exact = canonicalInt64(id);
    if (exact === null) return `users[${index}].id ${id} is outside the signed 64-bit range`;
    users.push({ id: exact, email: typeof user.email === 'string' ? user.email : null });
  }
  return { users, count: typeof count === 'number' ? count : undefined, nextPage: typeof nextPage === 'string' ? nextPage : null, cursor };
};
