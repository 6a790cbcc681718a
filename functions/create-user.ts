import { makeLogger } from '../lib/http/logger.ts';
import { makeHttpHandler } from '../lib/http/make-http-handler.ts';

const logger = makeLogger('createUser');

// Placeholder until the device layer lands (issue 4).
export const handler = makeHttpHandler({
  route: 'POST /api/users',
  logger,
  handle: async () => ({ status: 200, body: [] }),
});
