import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { vi } from 'vitest';
import { createIdempotencyTable, createUsersTable } from '../../scripts/local/dynalite.ts';
import { LOCAL_AWS_ENV } from '../../scripts/local/local-aws.ts';
import { saveEnvironment, setEnvironment } from './environment.ts';

type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

export interface UserHandlers {
  createUser: Handler;
  getUser: Handler;
  /** Puts the environment back as it was. */
  restore: () => void;
}

/**
 * Handlers read their configuration on first use, so each scenario sets the environment and then
 * imports fresh copies of the handler modules.
 */
export const loadUserHandlers = async (env: Record<string, string | undefined>): Promise<UserHandlers> => {
  const restore = saveEnvironment(Object.keys(env));
  setEnvironment(env);
  vi.resetModules();
  const createUser = (await import('../../functions/create-user.ts')).handler as unknown as Handler;
  const getUser = (await import('../../functions/get-user.ts')).handler as unknown as Handler;
  return { createUser, getUser, restore };
};

/** The SDK environment of a local DynamoDB endpoint. */
export const localDynamoEnv = (endpoint: string) => ({
  AWS_ENDPOINT_URL_DYNAMODB: endpoint,
  ...LOCAL_AWS_ENV,
  AWS_SESSION_TOKEN: undefined,
  AWS_PROFILE: undefined,
});

/** Fresh users and idempotency tables (the two tables createUser needs) at a local DynamoDB endpoint, as the variables naming them. */
export const createUserTables = async (endpoint: string) => {
  const tables = { USERS_TABLE: `users-${randomUUID()}`, IDEMPOTENCY_TABLE: `idempotency-${randomUUID()}` };
  await Promise.all([
    createUsersTable({ endpoint, tableName: tables.USERS_TABLE }),
    createIdempotencyTable({ endpoint, tableName: tables.IDEMPOTENCY_TABLE }),
  ]);
  return tables;
};
