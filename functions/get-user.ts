import { makeLogger } from '../lib/http/logger.ts';
import { makeHttpHandler } from '../lib/http/make-http-handler.ts';

const logger = makeLogger('getUser');

// Placeholder until the device layer lands (issue 4).
export const handler = makeHttpHandler({
  route: 'GET /api/users/{id}',
  logger,
  handle: async () => ({ status: 200, body: [] }),
});
