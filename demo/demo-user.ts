import type { User } from '../lib/users/user.ts';

/**
 * The one user the embedded table starts with, so `GET /api/users/{id}` (events/getUser/success.json,
 * `npm start`) has something to read. `npm start` writes it through the real
 * store, like any created user.
 */
export const DEMO_USER: User = {
  id: '3f6c1a52-8d4e-4b7a-9c2f-1e5d7a8b9c0d',
  email: 'demo.user@example.com',
  username: 'demo.user@example.com',
  firstName: 'Demo',
  lastName: 'User',
  active: true,
  created: '2026-11-22T10:00:00.000Z',
  lastUpdated: '2026-11-22T10:00:00.000Z',
};
