import type { NewUser, User, UserStore } from './user.ts';

export interface CreateUserDeps {
  store: UserStore;
  clock: () => Date;
  newId: () => string;
}

/**
 * Builds the user record (username = email, active, created = lastUpdated) and stores it; `origin`
 * names the request (UserStore.insert), and a create of the same origin returns the user it made.
 */
export const makeCreateUser =
  ({ store, clock, newId }: CreateUserDeps) =>
  async (input: NewUser, origin?: string): Promise<User> => {
    const now = clock().toISOString();
    const user: User = {
      id: newId(),
      email: input.email,
      username: input.email,
      firstName: input.firstName,
      lastName: input.lastName,
      active: true,
      created: now,
      lastUpdated: now,
    };
    return store.insert(user, origin);
  };

/** The `Location` of a created user. */
export const userLocation = (id: string): string => `/api/users/${id}`;
