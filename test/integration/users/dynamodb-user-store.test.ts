import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConflictError } from '../../../lib/errors.ts';
import { IDEMPOTENCY_KEEP_SECONDS } from '../../../lib/http/idempotency-key.ts';
import { makeDynamoDbUserStore } from '../../../lib/users/dynamodb-user-store.ts';
import { UserStoreError } from '../../../lib/users/user-errors.ts';
import type { User, UserStore } from '../../../lib/users/user.ts';
import { createUsersTable, startDynalite, type Dynalite } from '../../../scripts/local/dynalite.ts';
import { LOCAL_AWS } from '../../../scripts/local/local-aws.ts';
import { startFaultProxy, type FaultProxy } from '../../support/fault-proxy.ts';

/** Any create of an email reclaims a lock left without its user once it is older than 60 s (docs/architecture.md, docs/operations.md). */
const STALE_LOCK_MS = 60_000;

const documentClient = (endpoint: string) => DynamoDBDocumentClient.from(new DynamoDBClient({ ...LOCAL_AWS, endpoint, maxAttempts: 1 }));

const newUser = (email: string): User => ({
  id: randomUUID(),
  email,
  username: email,
  firstName: 'Jane',
  lastName: 'Doe',
  active: true,
  created: '2026-11-22T10:00:00.000Z',
  lastUpdated: '2026-11-22T10:00:00.000Z',
});

describe('DynamoDB user store (dynalite on 127.0.0.1)', () => {
  let dynalite: Dynalite;
  let proxy: FaultProxy;
  let direct: DynamoDBDocumentClient;
  let viaProxy: DynamoDBDocumentClient;
  let retryingClient: DynamoDBDocumentClient;
  let tableName: string;
  let store: UserStore;

  const items = async () => (await direct.send(new ScanCommand({ TableName: tableName, ConsistentRead: true }))).Items ?? [];

  beforeAll(async () => {
    dynalite = await startDynalite();
    proxy = await startFaultProxy(dynalite.endpoint);
    direct = documentClient(dynalite.endpoint);
    viaProxy = documentClient(proxy.endpoint);
    retryingClient = DynamoDBDocumentClient.from(new DynamoDBClient({ ...LOCAL_AWS, endpoint: proxy.endpoint, maxAttempts: 3 }));
  });
  afterAll(async () => {
    direct.destroy();
    viaProxy.destroy();
    retryingClient.destroy();
    await proxy.close();
    await dynalite.stop();
  });
  beforeEach(async () => {
    tableName = `users-${randomUUID()}`;
    await createUsersTable({ endpoint: dynalite.endpoint, tableName });
    store = makeDynamoDbUserStore({ client: viaProxy, tableName });
    proxy.decide(() => 'pass');
  });
  afterEach(() => {
    proxy.calls.length = 0;
  });

  it('stores a user and reads it back by id', async () => {
    const user = newUser('jane@example.com');
    await store.insert(user);
    expect(await store.getById(user.id)).toEqual(user);
  });

  it('returns undefined for an id it does not hold', async () => {
    expect(await store.getById(randomUUID())).toBeUndefined();
  });

  it('refuses the same email in another case with a 409 and writes nothing', async () => {
    await store.insert(newUser('Jane.Doe@Example.com'));
    const before = await items();
    const duplicate = newUser('jane.doe@EXAMPLE.COM');
    const failure = await store.insert(duplicate).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ConflictError);
    expect(failure).toMatchObject({ status: 409 });
    expect(await items()).toEqual(before);
    expect(await store.getById(duplicate.id)).toBeUndefined();
  });

  it.each([
    ['straße@example.de', 'STRASSE@example.de'],
    ['ΣΑΣ@example.gr', 'σασ@example.gr'],
  ])('refuses %s after %s, equal but for case beyond ASCII, with a 409 and writes nothing', async (first, second) => {
    await store.insert(newUser(first));
    const before = await items();
    const failure = await store.insert(newUser(second)).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ConflictError);
    expect(await items()).toEqual(before);
  });

  it('returns the user a create of the same origin made, writing nothing, and refuses another origin or none with a 409', async () => {
    const first = newUser('Origin@Example.com');
    const soon = makeDynamoDbUserStore({ client: viaProxy, tableName, now: () => Date.parse(first.created) + 60_000 });
    expect(await soon.insert(first, 'origin-a')).toEqual(first);
    const before = await items();
    const retry = newUser('Origin@Example.com');
    expect(await soon.insert(retry, 'origin-a')).toEqual(first);
    expect(await items()).toEqual(before);
    await expect(soon.insert(newUser('origin@example.com'), 'origin-b')).rejects.toBeInstanceOf(ConflictError);
    await expect(soon.insert(newUser('origin@example.com'))).rejects.toBeInstanceOf(ConflictError);
    expect(await items()).toEqual(before);
  });

  it('returns the user of the same origin until the lock is as old as a key is kept (24 hours), then refuses with a 409', async () => {
    const first = newUser('day@example.com');
    const at = (ms: number) => makeDynamoDbUserStore({ client: viaProxy, tableName, now: () => Date.parse(first.created) + ms });
    await at(0).insert(first, 'origin-day');
    const before = await items();
    const ORIGIN_RETENTION_MS = IDEMPOTENCY_KEEP_SECONDS * 1000;
    expect(ORIGIN_RETENTION_MS).toBe(24 * 60 * 60 * 1000);
    expect(await at(ORIGIN_RETENTION_MS - 1).insert(newUser('day@example.com'), 'origin-day')).toEqual(first);
    await expect(at(ORIGIN_RETENTION_MS).insert(newUser('day@example.com'), 'origin-day')).rejects.toBeInstanceOf(ConflictError);
    await expect(at(ORIGIN_RETENTION_MS + 60_000).insert(newUser('DAY@example.com'), 'origin-day')).rejects.toBeInstanceOf(ConflictError);
    expect(await items()).toEqual(before);
  });

  it.each([
    ['the email in another case', { email: 'Same@example.com' }],
    ['another first name', { firstName: 'Janet' }],
    ['another last name', { lastName: 'Roe' }],
  ])('refuses a create of the same origin asking for another user (%s) with a 409, writing nothing', async (_label, change) => {
    const first = newUser('same@example.com');
    const soon = makeDynamoDbUserStore({ client: viaProxy, tableName, now: () => Date.parse(first.created) + 60_000 });
    await soon.insert(first, 'origin-same');
    const before = await items();
    const other = { ...newUser('same@example.com'), ...change };
    await expect(soon.insert({ ...other, username: other.email }, 'origin-same')).rejects.toBeInstanceOf(ConflictError);
    expect(await items()).toEqual(before);
    expect(await soon.insert(newUser('same@example.com'), 'origin-same')).toEqual(first);
  });

  it('refuses an address an older lock holds under its merely lower-cased form (before the email key), with a 409', async () => {
    const earlier = newUser('Straße@example.de');
    await direct.send(
      new PutCommand({ TableName: tableName, Item: { pk: `USER#${earlier.id}`, ...earlier, emailKey: 'straße@example.de' } }),
    );
    await direct.send(
      new PutCommand({ TableName: tableName, Item: { pk: 'EMAIL#straße@example.de', userId: earlier.id, created: earlier.created } }),
    );
    const before = await items();
    await expect(store.insert(newUser('straße@example.de'))).rejects.toBeInstanceOf(ConflictError);
    expect(await items()).toEqual(before);
    // An older lock whose user never landed holds nothing.
    await direct.send(
      new PutCommand({ TableName: tableName, Item: { pk: 'EMAIL#ﬀ@example.de', userId: randomUUID(), created: earlier.created } }),
    );
    const user = newUser('ﬀ@example.de');
    expect(await store.insert(user)).toEqual(user);
  });

  it('reclaims at once a fresh lock of the same origin whose user never landed (its earlier attempt failed) and creates the user', async () => {
    const lock = { pk: 'EMAIL#halfway@example.com', userId: randomUUID(), created: new Date().toISOString(), origin: 'origin-c' };
    await direct.send(new PutCommand({ TableName: tableName, Item: lock }));
    const user = newUser('halfway@example.com');
    expect(await store.insert(user, 'origin-c')).toEqual(user);
    expect(await store.getById(user.id)).toEqual(user);
    const stored = await items();
    expect(stored.map((item) => String(item.pk)).sort()).toEqual(['EMAIL#halfway@example.com', `USER#${user.id}`]);
    expect(stored.find((item) => item.pk === lock.pk)).toMatchObject({ userId: user.id, origin: 'origin-c' });
  });

  it('leaves a fresh lock of another origin or of none without its user alone (its create may still be running): 409', async () => {
    const lock = { pk: 'EMAIL#other@example.com', userId: randomUUID(), created: new Date().toISOString(), origin: 'origin-d' };
    await direct.send(new PutCommand({ TableName: tableName, Item: lock }));
    await expect(store.insert(newUser('other@example.com'), 'origin-e')).rejects.toBeInstanceOf(ConflictError);
    await expect(store.insert(newUser('other@example.com'))).rejects.toBeInstanceOf(ConflictError);
    expect(await items()).toEqual([lock]);
  });

  it('decides uniqueness by conditional writes, never by a read first', async () => {
    await store.insert(newUser('jane@example.com'));
    await store.insert(newUser('jane@example.com')).catch(() => undefined);
    // Only a refused lock write is followed by reads: is the lock a stale one whose user never landed?
    expect(proxy.calls.map((call) => call.operation)).toEqual(['PutItem', 'PutItem', 'PutItem', 'GetItem', 'GetItem']);
    expect(proxy.calls.filter((call) => call.operation === 'PutItem').every((call) => call.body.includes('attribute_not_exists(pk)'))).toBe(
      true,
    );
  });

  it('reclaims a stale email lock whose user never landed (a create cut off mid-way) and creates the user', async () => {
    const lockedBy = randomUUID();
    await direct.send(
      new PutCommand({
        TableName: tableName,
        Item: { pk: 'EMAIL#stale@example.com', userId: lockedBy, created: '2026-11-22T10:00:00.000Z' },
      }),
    );
    const later = makeDynamoDbUserStore({
      client: viaProxy,
      tableName,
      now: () => Date.parse('2026-11-22T10:00:00.000Z') + STALE_LOCK_MS + 1,
    });
    const user = newUser('Stale@Example.com');
    await later.insert(user);
    expect(await later.getById(user.id)).toEqual(user);
    const stored = await items();
    expect(stored.find((item) => item.pk === 'EMAIL#stale@example.com')).toMatchObject({ userId: user.id });
    expect(stored).toHaveLength(2);
  });

  it('leaves a fresh lock without its user alone (its create may still be running): 409', async () => {
    const lockedBy = randomUUID();
    const lock = { pk: 'EMAIL#inflight@example.com', userId: lockedBy, created: '2026-11-22T10:00:00.000Z' };
    await direct.send(new PutCommand({ TableName: tableName, Item: lock }));
    const soon = makeDynamoDbUserStore({ client: viaProxy, tableName, now: () => Date.parse(lock.created) + STALE_LOCK_MS - 1 });
    await expect(soon.insert(newUser('inflight@example.com'))).rejects.toBeInstanceOf(ConflictError);
    expect(await items()).toEqual([lock]);
  });

  it('answers 503, not 409, when checking a refused lock fails', async () => {
    await store.insert(newUser('check@example.com'));
    proxy.decide((call) => (call.operation === 'GetItem' ? 'fail' : 'pass'));
    const failure = await store.insert(newUser('check@example.com')).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(UserStoreError);
    expect(await items()).toHaveLength(2);
  });

  it('lets exactly one of 50 concurrent inserts of one email win', async () => {
    const attempts = Array.from({ length: 50 }, (_, index) => newUser(index % 2 ? 'race@example.com' : 'RACE@example.com'));
    const outcomes = await Promise.allSettled(attempts.map((user) => store.insert(user)));
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    const rejected = outcomes.filter((outcome) => outcome.status === 'rejected');
    expect(rejected).toHaveLength(49);
    expect(rejected.every((outcome) => outcome.reason instanceof ConflictError)).toBe(true);
    const stored = await items();
    expect(stored.filter((item) => String(item.pk).startsWith('USER#'))).toHaveLength(1);
    expect(stored.filter((item) => String(item.pk).startsWith('EMAIL#'))).toHaveLength(1);
  });

  it('removes the email lock when the user write fails, so the email stays free', async () => {
    proxy.decide((call) => (call.operation === 'PutItem' && call.body.includes('"USER#') ? 'fail' : 'pass'));
    const user = newUser('lock@example.com');
    const failure = await store.insert(user).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(UserStoreError);
    expect(failure).toMatchObject({ status: 503, publicMessage: 'Service Unavailable' });
    expect(await items()).toEqual([]);
    proxy.decide(() => 'pass');
    await store.insert(newUser('lock@example.com'));
    expect(await items()).toHaveLength(2);
  });

  it('removes a user write that landed unseen along with the lock', async () => {
    proxy.decide((call) => (call.operation === 'PutItem' && call.body.includes('"USER#') ? 'fail-after-forwarding' : 'pass'));
    const user = newUser('unseen@example.com');
    await expect(store.insert(user)).rejects.toBeInstanceOf(UserStoreError);
    expect(await items()).toEqual([]);
  });

  it('keeps the lock (never two users for one email) when the user item cannot be removed', async () => {
    proxy.decide((call) => {
      if (!call.body.includes('"USER#')) return 'pass';
      if (call.operation === 'PutItem') return 'fail-after-forwarding';
      return call.operation === 'DeleteItem' ? 'fail' : 'pass';
    });
    const user = newUser('stuck@example.com');
    const failure = await store.insert(user).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(UserStoreError);
    expect(String((failure as Error).message)).toContain(
      `compensation failed, user ${user.id} left its user item (if its write landed) and its email lock in place (`,
    );
    const stored = await items();
    expect(stored.map((item) => String(item.pk)).sort()).toEqual(['EMAIL#stuck@example.com', `USER#${user.id}`]);
    proxy.decide(() => 'pass');
    await expect(store.insert(newUser('STUCK@example.com'))).rejects.toBeInstanceOf(ConflictError);
  });

  it('says the lock alone is left when the user item went but the lock could not', async () => {
    proxy.decide((call) => {
      if (call.operation === 'PutItem' && call.body.includes('"USER#')) return 'fail';
      return call.operation === 'DeleteItem' && call.body.includes('"EMAIL#') ? 'fail' : 'pass';
    });
    const user = newUser('lockonly@example.com');
    const failure = await store.insert(user).catch((error: unknown) => error);
    expect(String((failure as Error).message)).toMatch(
      new RegExp(`^User storage failed: write user item; compensation failed, user ${user.id} left its email lock in place \\(`),
    );
    expect((await items()).map((item) => String(item.pk))).toEqual(['EMAIL#lockonly@example.com']);
  });

  it('cleans up a lock whose write landed although the call failed', async () => {
    proxy.decide((call) => (call.operation === 'PutItem' && call.body.includes('"EMAIL#') ? 'fail-after-forwarding' : 'pass'));
    await expect(store.insert(newUser('ghost@example.com'))).rejects.toBeInstanceOf(UserStoreError);
    expect(await items()).toEqual([]);
  });

  it.each([
    ['the email lock', '"EMAIL#'],
    ['the user item', '"USER#'],
  ])('completes when the answer to a landed write of %s is lost and the SDK retries it', async (_label, marker) => {
    const retrying = makeDynamoDbUserStore({ client: retryingClient, tableName });
    let failed = 0;
    proxy.decide((call) =>
      call.operation === 'PutItem' && call.body.includes(marker) && failed++ === 0 ? 'fail-after-forwarding' : 'pass',
    );
    const user = newUser('retry@example.com');
    await retrying.insert(user);
    expect(failed).toBeGreaterThan(1);
    expect(await retrying.getById(user.id)).toEqual(user);
    expect((await items()).map((item) => String(item.pk)).sort()).toEqual(['EMAIL#retry@example.com', `USER#${user.id}`]);
  });

  it('says only that the lock may be left when its own write failed and so did the clean-up', async () => {
    proxy.decide((call) =>
      call.body.includes('"EMAIL#') && (call.operation === 'PutItem' || call.operation === 'DeleteItem') ? 'fail' : 'pass',
    );
    const user = newUser('unsure@example.com');
    const failure = await store.insert(user).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(UserStoreError);
    expect(String((failure as Error).message)).toMatch(
      new RegExp(
        `^User storage failed: write email lock; compensation failed, user ${user.id} left its email lock in place if its write landed \\(`,
      ),
    );
    expect(await items()).toEqual([]);
  });

  it('still refuses a user item whose id is taken by another email', async () => {
    const first = newUser('first@example.com');
    await store.insert(first);
    const clash = { ...newUser('second@example.com'), id: first.id };
    await expect(store.insert(clash)).rejects.toBeInstanceOf(UserStoreError);
    expect(await store.getById(first.id)).toEqual(first);
    expect((await items()).map((item) => String(item.pk)).sort()).toEqual(['EMAIL#first@example.com', `USER#${first.id}`]);
  });

  it('turns a failing read into a UserStoreError carrying the cause for the log only', async () => {
    proxy.decide(() => 'fail');
    const failure = await store.getById(randomUUID()).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(UserStoreError);
    expect((failure as UserStoreError).publicMessage).toBe('Service Unavailable');
    expect((failure as UserStoreError).cause).toBeInstanceOf(Error);
  });

  it('turns a missing table into a UserStoreError, not a conflict', async () => {
    const missing = makeDynamoDbUserStore({ client: viaProxy, tableName: 'no-such-table' });
    await expect(missing.insert(newUser('x@example.com'))).rejects.toBeInstanceOf(UserStoreError);
  });
});
