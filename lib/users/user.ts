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
  /** Stores a new user; throws ConflictError when the email is taken and writes nothing then. */
  insert: (user: User) => Promise<void>;
  getById: (id: string) => Promise<User | undefined>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Ids are lower-case UUIDs; anything else cannot name a user, so it is not looked up at all. */
export const isUserId = (value: string | undefined): value is string => value !== undefined && UUID.test(value);
