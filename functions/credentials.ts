import type { Credentials } from '../lib/credentials/credentials-schema.ts';
import { makeLogger } from '../lib/runtime/logger.ts';
import { makeHttpHandler } from '../lib/http/make-http-handler.ts';
import { jsonBody } from '../lib/http/json-body.ts';
import { validate as validateCredentials } from '../lib/credentials/credentials.generated.ts';

const logger = makeLogger('credentials');

/** POST /credentials: validates the typed body and echoes it. Also serves the API's `$default` route (404/405). */
export const handler = makeHttpHandler<Credentials>({
  routes: ['POST /credentials'],
  logger,
  body: jsonBody({ parameterName: 'credentials', validate: validateCredentials }),
  handle: async ({ body }) => ({
    status: 200,
    body: { client_id: body.client_id, client_secret: body.client_secret },
    // The body holds a secret: no cache along the way may keep it.
    headers: { 'Cache-Control': 'no-store' },
  }),
});
