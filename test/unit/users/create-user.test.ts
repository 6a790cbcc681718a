import { describe, expect, it } from 'vitest';
import { makeCreateUser, userLocation } from '../../../lib/users/create-user.ts';
import type { User, UserStore } from '../../../lib/users/user.ts';

const memoryStore = (): UserStore & { users: User[] } => {
  const users: User[] = [];
  const origins = new Map<string, User>();
  return {
    users,
    insert: async (user, origin) => {
      const earlier = origins.get(`${origin}\n${user.email.toLowerCase()}`);
      if (origin !== undefined && earlier !== undefined) return earlier;
      users.push(user);
      if (origin !== undefined) origins.set(`${origin}\n${user.email.toLowerCase()}`, user);
      return user;
    },
    getById: async (id) => users.find((user) => user.id === id),
  };
};

describe('makeCreateUser', () => {
  it('builds the documented record: id, username = email, active, created = lastUpdated in UTC with milliseconds', async () => {
    const store = memoryStore();
    const createUser = makeCreateUser({
      store,
      clock: () => new Date(Date.UTC(2026, 10, 22, 10, 0, 0, 7)),
      newId: () => '3f0e8f0a-2b7e-4a53-9a41-6d1c2f7a9b10',
    });
    const user = await createUser({ email: 'Jane.Doe@Example.com', firstName: 'Jane', lastName: 'Doe' });
    expect(user).toEqual({
      id: '3f0e8f0a-2b7e-4a53-9a41-6d1c2f7a9b10',
      email: 'Jane.Doe@Example.com',
      username: 'Jane.Doe@Example.com',
      firstName: 'Jane',
      lastName: 'Doe',
      active: true,
      created: '2026-11-22T10:00:00.007Z',
      lastUpdated: '2026-11-22T10:00:00.007Z',
    });
    expect(Object.keys(user)).toEqual(['id', 'email', 'username', 'firstName', 'lastName', 'active', 'created', 'lastUpdated']);
    expect(store.users).toEqual([user]);
  });

  it('gives each user a new id', async () => {
    let next = 0;
    const createUser = makeCreateUser({ store: memoryStore(), clock: () => new Date(), newId: () => `id-${(next += 1)}` });
    const first = await createUser({ email: 'a@example.com', firstName: 'A', lastName: 'A' });
    const second = await createUser({ email: 'b@example.com', firstName: 'B', lastName: 'B' });
    expect(first.id).not.toBe(second.id);
  });

  it('passes a store failure on to the caller', async () => {
    const failure = new Error('store down');
    const createUser = makeCreateUser({
      store: { insert: async () => Promise.reject(failure), getById: async () => undefined },
      clock: () => new Date(),
      newId: () => 'x',
    });
    await expect(createUser({ email: 'a@example.com', firstName: 'A', lastName: 'A' })).rejects.toBe(failure);
  });

  it('locates a user under /api/users/{id}', () => {
    expect(userLocation('abc')).toBe('/api/users/abc');
  });

  it('passes the request origin to the store and answers with the user the store returns', async () => {
    const store = memoryStore();
    let next = 0;
    const createUser = makeCreateUser({ store, clock: () => new Date(), newId: () => `id-${(next += 1)}` });
    const first = await createUser({ email: 'a@example.com', firstName: 'A', lastName: 'B' }, 'origin-1');
    const again = await createUser({ email: 'a@example.com', firstName: 'A', lastName: 'B' }, 'origin-1');
    expect(again).toEqual(first);
    expect(store.users).toHaveLength(1);
  });
});
