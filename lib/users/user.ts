/** The `user` body of POST /api/users once aliases are folded and the schema passed (docs/api.md). */
export interface NewUser {
  email: string;
  firstName: string;
  lastName: string;
}

/** A stored user as returned by POST and GET /api/users. Key order is the documented one (docs/api.md). */
export interface User {
  id: string;
  email: string;
  username: string;
  firstName: string;
  lastName: string;
  active: boolean;
  /** UTC ISO 8601 with milliseconds. */
  created: string;
  lastUpdated: string;
}

/** Persistence of users; implementations enforce email uniqueness themselves (case-insensitively). */
export interface UserStore {
  /**
   * Stores a new user and returns it; throws ConflictError when the email is taken and writes
   * nothing then. `origin` names the request that creates it (a caller's Idempotency-Key): when the
   * email was taken by a create of the same origin less than a key's retention ago, and `user` asks
   * for that same user (email exactly as stored, same names), that user is returned instead, so a
   * retry whose first outcome was never kept gets its own user back, not a conflict. An email lock
   * the same origin left without its user (an earlier attempt whose clean-up failed) is freed at
   * once: callers pass an origin only where no two creates of it run at the same time (safe retries
   * answer a repeat 409 while the first request with the key runs).
   */
  insert: (user: User, origin?: string) => Promise<User>;
  getById: (id: string) => Promise<User | undefined>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Ids are lower-case UUIDs; anything else cannot name a user, so it is not looked up at all. */
export const isUserId = (value: string | undefined): value is string => value !== undefined && UUID.test(value);
