import { loadUsersConfig } from '../lib/config.ts';
import { once } from '../lib/async/once.ts';
import { NotFoundError } from '../lib/errors.ts';
import { checkConfigAtStartup, makeLogger } from '../lib/runtime/logger.ts';
import { makeHttpHandler } from '../lib/http/make-http-handler.ts';
import { jsonAccept } from '../lib/http/json-accept.ts';
import { makeUsersDocumentClient } from '../lib/users/dynamodb-client.ts';
import { makeDynamoDbUserStore } from '../lib/users/dynamodb-user-store.ts';
import { isUserId } from '../lib/users/user.ts';

const logger = makeLogger('getUser');
const store = once(() => makeDynamoDbUserStore({ client: makeUsersDocumentClient(), tableName: loadUsersConfig().usersTable }));
checkConfigAtStartup(logger, store);

/** GET /api/users/{id}: the stored record, or 404 (also for an id that is not a UUID, without a lookup). */
export const handler = makeHttpHandler({
  routes: ['GET /api/users/{id}'],
  logger,
  accept: jsonAccept(),
  handle: async ({ pathParameters }) => {
    const users = store(); // first, so a misconfigured function answers 500 whatever the id
    const id = pathParameters.id;
    const user = isUserId(id) ? await users.getById(id) : undefined;
    if (!user) throw new NotFoundError('User not found');
    return { status: 200, body: user };
  },
});
