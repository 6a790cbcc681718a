import { canonicalInt64 } from '../int64.ts';
import { isPlainObject } from '../plain-object.ts';

/**
 * Parsing one page of `GET /api/v1/users.json`. Listing ids are int64: they are taken from the JSON
 * source text (the reviver's third argument, Node ≥ 21) so ids above 2^53 are never rounded, and
 * range-checked here so an id the import could never write fails as this page's error, not later.
 */
export interface UsersPage {
  users: { id: string; email: string | null }[];
  count: number | undefined;
  nextPage: string | null;
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
  const users: UsersPage['users'] = [];
  for (const [index, user] of parsed.users.entries()) {
    if (!isPlainObject(user)) return `users[${index}] is not an object`;
    const id = user.id instanceof ExactId ? user.id.text : undefined;
    if (id === undefined || !INTEGER_TEXT.test(id)) return `users[${index}].id is not an integer`;
    const exact = canonicalInt64(id);
    if (exact === null) return `users[${index}].id ${id} is outside the signed 64-bit range`;
    users.push({ id: exact, email: typeof user.email === 'string' ? user.email : null });
  }
  return { users, count: typeof count === 'number' ? count : undefined, nextPage: typeof nextPage === 'string' ? nextPage : null };
};
