import { randomUUID } from 'node:crypto';
import { loadUsersConfig, once } from '../lib/config.ts';
import { makeLogger } from '../lib/http/logger.ts';
import { checkConfigAtStartup } from '../lib/startup.ts';
import { makeHttpHandler } from '../lib/http/make-http-handler.ts';
import { requireJsonAccepted } from '../lib/users/accepts-json.ts';
import { makeCreateUser, userLocation } from '../lib/users/create-user.ts';
import { makeUsersDocumentClient } from '../lib/users/dynamodb-client.ts';
import { makeDynamoDbUserStore } from '../lib/users/dynamodb-user-store.ts';
import { makeUserBodySpec } from '../lib/users/user-body.ts';
import type { NewUser } from '../lib/users/user.ts';

const logger = makeLogger('createUser');
const config = once(() => loadUsersConfig());
const createUser = once(() =>
  makeCreateUser({
    store: makeDynamoDbUserStore({ client: makeUsersDocumentClient(), tableName: config().usersTable }),
    clock: () => new Date(),
    newId: randomUUID,
  }),
);
checkConfigAtStartup(logger, createUser);

/** POST /api/users: validates the `user` body (aliases folded), stores it unique by email, 201 + Location. */
export const handler = makeHttpHandler<NewUser>({
  route: 'POST /api/users',
  logger,
  body: makeUserBodySpec(() => config().emailPattern),
  handle: async ({ body, headers }) => {
    requireJsonAccepted(headers);
    const user = await createUser()(body);
    return { status: 201, body: user, headers: { Location: userLocation(user.id) } };
  },
});
