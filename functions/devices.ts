import { makeLogger } from '../lib/http/logger.ts';
import { makeHttpHandler } from '../lib/http/make-http-handler.ts';

const logger = makeLogger('devices');

// Placeholder until the device layer lands (issue 2).
export const handler = makeHttpHandler({
  route: 'GET /devices',
  logger,
  handle: async () => ({ status: 200, body: [] }),
});
