import type { NewUser, User, UserStore } from './user.ts';

export interface CreateUserDeps {
  store: UserStore;
  clock: () => Date;
  newId: () => string;
}

/** Builds the user record (username = email, active, created = lastUpdated) and stores it. */
export const makeCreateUser =
  ({ store, clock, newId }: CreateUserDeps) =>
  async (input: NewUser): Promise<User> => {
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
    await store.insert(user);
    return user;
  };

/** The `Location` of a created user. */
export const userLocation = (id: string): string => `/api/users/${id}`;
