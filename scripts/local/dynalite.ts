import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { IDEMPOTENCY_TABLE_KEY } from '../../lib/http/idempotency-store.ts';
import { makeDynamoDbUserStore } from '../../lib/users/dynamodb-user-store.ts';
import type { User } from '../../lib/users/user.ts';
import { LOCAL_AWS } from './local-aws.ts';

/**
 * A DynamoDB-compatible server (dynalite, in memory) on a free loopback port, for tests, benchmarks
 * and `npm start`.
 */
export interface Dynalite {
  endpoint: string;
  stop: () => Promise<void>;
}

type DynaliteFactory = (options: { createTableMs?: number; deleteTableMs?: number; updateTableMs?: number }) => Server;

// dynalite is CommonJS without type declarations.
const dynalite = createRequire(import.meta.url)('dynalite') as DynaliteFactory;

export const startDynalite = async (): Promise<Dynalite> => {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  let stopped: Promise<void> | undefined;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stop: () =>
      (stopped ??= new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // SDK clients keep connections alive; close them so `close` does not wait for their timeout.
        server.closeAllConnections();
      })),
  };
};

/** Creates a table with a string hash key and waits until it is ACTIVE. */
const createTable = async ({ endpoint, tableName, hashKey }: { endpoint: string; tableName: string; hashKey: string }): Promise<void> => {
  const client = new DynamoDBClient({ ...LOCAL_AWS, endpoint });
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [{ AttributeName: hashKey, AttributeType: 'S' }],
        KeySchema: [{ AttributeName: hashKey, KeyType: 'HASH' }],
      }),
    );
    for (let attempt = 0; attempt < 100; attempt += 1) {
      const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
      if (Table?.TableStatus === 'ACTIVE') return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`Table ${tableName} did not become ACTIVE`);
  } finally {
    client.destroy();
  }
};

/** Creates the users table with the key schema of infra/users-table.yml. */
export const createUsersTable = ({ endpoint, tableName }: { endpoint: string; tableName: string }): Promise<void> =>
  createTable({ endpoint, tableName, hashKey: 'pk' });

/**
 * Creates the idempotency table with the key schema of infra/idempotency-table.yml. Its TTL is left
 * out: dynalite has no UpdateTimeToLive, and none is needed, since Powertools itself treats a record
 * past its `expiration` as absent; TTL only clears such records away in AWS.
 */
export const createIdempotencyTable = ({ endpoint, tableName }: { endpoint: string; tableName: string }): Promise<void> =>
  createTable({ endpoint, tableName, hashKey: IDEMPOTENCY_TABLE_KEY });

/** Writes `user` through the real store, like any created user (the demo user of `npm start`). */
export const seedUser = async ({ endpoint, tableName, user }: { endpoint: string; tableName: string; user: User }): Promise<void> => {
  const client = DynamoDBDocumentClient.from(new DynamoDBClient({ ...LOCAL_AWS, endpoint }));
  try {
    await makeDynamoDbUserStore({ client, tableName }).insert(user);
  } finally {
    client.destroy();
  }
};
