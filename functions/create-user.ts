import { randomUUID } from 'node:crypto';
import { loadCreateUserConfig } from '../lib/config.ts';
import { once } from '../lib/async/once.ts';
import { idempotentRequests } from '../lib/http/idempotent-requests.ts';
import { checkConfigAtStartup, makeLogger } from '../lib/runtime/logger.ts';
import { makeHttpHandler } from '../lib/http/make-http-handler.ts';
import { jsonAccept } from '../lib/http/json-accept.ts';
import { jsonBody } from '../lib/http/json-body.ts';
import { makeCreateUser, userLocation } from '../lib/users/create-user.ts';
import { makeUsersDocumentClient } from '../lib/users/dynamodb-client.ts';
import { makeDynamoDbUserStore } from '../lib/users/dynamodb-user-store.ts';
import { canonicalUserBody, makeUserBodySpec } from '../lib/users/user-body.ts';
import type { NewUser } from '../lib/users/user.ts';

const ROUTE = 'POST /api/users';
const logger = makeLogger('createUser');
const config = once(() => loadCreateUserConfig());
const createUser = once(() =>
  makeCreateUser({
    store: makeDynamoDbUserStore({ client: makeUsersDocumentClient(), tableName: config().usersTable }),
    clock: () => new Date(),
    newId: randomUUID,
  }),
);
// Loaded with the first request that has an Idempotency-Key: requests without one never need it.
const idempotencyStore = once(async () => {
  const { makeDynamoDbIdempotencyStore, makeIdempotencyDynamoDbClient } = await import('../lib/http/idempotency-store.ts');
  return makeDynamoDbIdempotencyStore({ client: makeIdempotencyDynamoDbClient(), tableName: config().idempotencyTable });
});
checkConfigAtStartup(logger, createUser);

/**
 * POST /api/users: validates the `user` body (aliases folded), stores it unique by email, 201 +
 * Location; with an Idempotency-Key, a repeat gets the first outcome again.
 */
export const handler = makeHttpHandler<NewUser>({
  routes: [ROUTE],
  logger,
  accept: jsonAccept(),
  body: jsonBody(makeUserBodySpec(() => config().emailPattern)),
  wrapOperation: idempotentRequests({ persistenceStore: idempotencyStore, keyPrefix: ROUTE, canonicalBody: canonicalUserBody }),
  handle: async ({ body, origin }) => {
    const user = await createUser()(body, origin);
    return { status: 201, body: user, headers: { Location: userLocation(user.id) } };
  },
});
