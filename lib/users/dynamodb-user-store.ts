import { DeleteCommand, GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { emailKey } from './email-key.ts';
import { describeError } from '../errors.ts';
import { IDEMPOTENCY_KEEP_SECONDS } from '../http/idempotency-key.ts';
import { EmailTakenError, UserStoreError } from './user-errors.ts';
import type { User, UserStore } from './user.ts';

/**
 * Single-table layout (see infra/users-table.yml, hash key `pk`):
 * - `USER#<id>`: the user record, read by GET /api/users/{id};
 * - `EMAIL#<email key>`: the email lock (the key: email-key.ts), `{ userId, created, origin? }`, which
 *   makes DynamoDB itself refuse a second user with the same email through a conditional write;
 *   `origin` names the request that took it (UserStore.insert).
 */
const userItemKey = (id: string): string => `USER#${id}`;
const emailLockKey = (email: string): string => `EMAIL#${emailKey(email)}`;
/**
 * Where a lock taken before emails were keyed by email-key.ts sits: under the address merely
 * lower-cased. It differs from the key only beyond ASCII (`ß`, `ς`, `ẞ`, ligatures), and such a lock
 * still holds its email (docs/api.md, creating users).
 */
const olderEmailLockKey = (email: string): string => `EMAIL#${email.toLowerCase()}`;

export interface DynamoDbUserStoreOptions {
  client: DynamoDBDocumentClient;
  tableName: string;
  /** Milliseconds since the epoch; injected so tests can age a lock. */
  now?: () => number;
}

/**
 * An email lock without its user that is older than this cannot belong to a create still in flight
 * (the function times out after 29 s): it is what a create cut off or failed mid-way left behind.
 */
const STALE_LOCK_MS = 60_000;

/**
 * An origin is a caller's Idempotency-Key, which is forgotten once its outcome has been kept this
 * long: a lock older than this names a request that is over, and a create with the same key is new.
 */
const ORIGIN_RETENTION_MS = IDEMPOTENCY_KEEP_SECONDS * 1000;

const isConditionFailure = (error: unknown): boolean => (error as { name?: string } | null)?.name === 'ConditionalCheckFailedException';

const toUser = (item: Record<string, unknown>): User => ({
  id: String(item.id),
  email: String(item.email),
  username: String(item.username),
  firstName: String(item.firstName),
  lastName: String(item.lastName),
  active: item.active === true,
  created: String(item.created),
  lastUpdated: String(item.lastUpdated),
});

/**
 * Whether a create asks for the user `earlier` is: the email exactly as stored (emails are stored as
 * sent, so another case is another body) and the same names.
 */
const asksForSameUser = (earlier: User, user: User): boolean =>
  earlier.email === user.email && earlier.firstName === user.firstName && earlier.lastName === user.lastName;

/**
 * Email uniqueness decided by DynamoDB, never by a read: the lock is written first with
 * `attribute_not_exists`, then the user, and a failed second write is compensated (user, then lock).
 * Why not a transaction, and how a left lock is reclaimed: docs/architecture.md#why-it-is-built-this-way.
 */
export const makeDynamoDbUserStore = ({ client, tableName, now = Date.now }: DynamoDbUserStoreOptions): UserStore => {
  const deleteLock = async (user: User): Promise<void> => {
    try {
      await client.send(
        new DeleteCommand({
          TableName: tableName,
          Key: { pk: emailLockKey(user.email) },
          ConditionExpression: 'userId = :userId',
          ExpressionAttributeValues: { ':userId': user.id },
        }),
      );
    } catch (error) {
      // Not ours (or already gone): nothing of this request is left behind.
      if (!isConditionFailure(error)) throw error;
    }
  };

  /**
   * Undoes whatever of `user` may have landed: its user item (when its write may have landed), then
   * its email lock. Returns what a failure left, and why, if it failed.
   */
  const compensate = async (user: User, userItemMayExist: boolean): Promise<{ left: string; error: unknown } | undefined> => {
    if (userItemMayExist) {
      try {
        await client.send(new DeleteCommand({ TableName: tableName, Key: { pk: userItemKey(user.id) } }));
      } catch (error) {
        return { left: 'its user item (if its write landed) and its email lock', error };
      }
    }
    try {
      await deleteLock(user);
      return undefined;
    } catch (error) {
      return { left: 'its email lock', error };
    }
  };

  /**
   * Undoes what may have landed and fails. `lockLanded`: whether the lock is surely written (else its
   * write failed, and may or may not have landed), so the log says what a failed clean-up left.
   */
  const fail = async (
    user: User,
    step: string,
    cause: unknown,
    written: { lockLanded: boolean; userItemMayExist: boolean },
  ): Promise<never> => {
    const leftover = await compensate(user, written.userItemMayExist);
    const note =
      leftover === undefined
        ? ''
        : `; compensation failed, user ${user.id} left ${leftover.left} in place${written.lockLanded ? '' : ' if its write landed'} (${describeError(leftover.error)})`;
    throw new UserStoreError(`${step}${note}`, cause);
  };

  const readItem = async (pk: string): Promise<Record<string, unknown> | undefined> =>
    (await client.send(new GetCommand({ TableName: tableName, Key: { pk }, ConsistentRead: true }))).Item;

  /** Deletes the email's lock if it is still the very lock read: a lock taken meanwhile stays. True when it went. */
  const releaseLock = async (email: string, lock: Record<string, unknown>): Promise<boolean> => {
    try {
      await client.send(
        new DeleteCommand({
          TableName: tableName,
          Key: { pk: emailLockKey(email) },
          ConditionExpression: 'userId = :userId AND created = :created',
          ExpressionAttributeValues: { ':userId': lock.userId, ':created': lock.created },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  };

  /**
   * What refused the email lock of `user`, read from the lock itself:
   * - the user an earlier create of the same `origin` made, when `user` is a retry of it: the lock is
   *   younger than ORIGIN_RETENTION_MS and `user` asks for that very user. Anything else under the
   *   same key is another request, and the email is taken for it like for anyone else;
   * - `free` when no lock is left, or when one without its user was freed: a lock of the same origin
   *   at once (it is what this key's earlier, failed attempt left, and that attempt is over, since no
   *   two requests with one key run at the same time), another one once older than STALE_LOCK_MS;
   * - `taken` otherwise.
   */
  const meetLock = async (user: User, origin: string | undefined): Promise<User | 'free' | 'taken'> => {
    const lock = await readItem(emailLockKey(user.email));
    if (lock === undefined) return 'free';
    const age = now() - Date.parse(String(lock.created));
    const sameOrigin = origin !== undefined && lock.origin === origin;
    if (!sameOrigin && !(age > STALE_LOCK_MS)) return 'taken';
    const owner = await readItem(userItemKey(String(lock.userId)));
    if (owner === undefined) return (await releaseLock(user.email, lock)) ? 'free' : 'taken';
    const earlier = toUser(owner);
    return sameOrigin && age < ORIGIN_RETENTION_MS && asksForSameUser(earlier, user) ? earlier : 'taken';
  };

  /** Whether a lock of the older keying holds `email` (its user exists): only looked up where the keys differ. */
  const heldByOlderLock = async (email: string): Promise<boolean> => {
    const olderKey = olderEmailLockKey(email);
    if (olderKey === emailLockKey(email)) return false;
    const lock = await readItem(olderKey);
    return lock !== undefined && (await readItem(userItemKey(String(lock.userId)))) !== undefined;
  };

  const writeLock = (user: User, origin: string | undefined) =>
    client.send(
      new PutCommand({
        TableName: tableName,
        Item: { pk: emailLockKey(user.email), userId: user.id, created: user.created, ...(origin === undefined ? {} : { origin }) },
        // The SDK retries a write whose answer was lost; finding our own lock then is no conflict.
        ConditionExpression: 'attribute_not_exists(pk) OR userId = :userId',
        ExpressionAttributeValues: { ':userId': user.id },
      }),
    );

  /**
   * The email lock, taken once more after freeing a lock left without its user; EmailTakenError when
   * the email is in use, or the user a create of the same origin made (returned, nothing written).
   */
  const takeLock = async (user: User, origin: string | undefined): Promise<User | undefined> => {
    let older: boolean;
    try {
      older = await heldByOlderLock(user.email);
    } catch (error) {
      throw new UserStoreError('check an older email lock', error);
    }
    if (older) throw new EmailTakenError();
    try {
      await writeLock(user, origin);
      return undefined;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
    let met: User | 'free' | 'taken';
    try {
      met = await meetLock(user, origin);
    } catch (error) {
      throw new UserStoreError('check a refused email lock', error);
    }
    if (met === 'taken') throw new EmailTakenError();
    if (met !== 'free') return met;
    try {
      await writeLock(user, origin);
    } catch (error) {
      if (isConditionFailure(error)) throw new EmailTakenError();
      throw error;
    }
    return undefined;
  };

  const insert = async (user: User, origin?: string): Promise<User> => {
    try {
      const earlier = await takeLock(user, origin);
      if (earlier !== undefined) return earlier;
    } catch (error) {
      if (error instanceof EmailTakenError || error instanceof UserStoreError) throw error;
      // A timed-out write may still have landed.
      return fail(user, 'write email lock', error, { lockLanded: false, userItemMayExist: false });
    }
    try {
      await client.send(
        new PutCommand({
          TableName: tableName,
          Item: { pk: userItemKey(user.id), ...user, emailKey: emailKey(user.email) },
          // Holding the email lock, an item under our id with our email can only be our own retried write.
          ConditionExpression: 'attribute_not_exists(pk) OR emailKey = :emailKey',
          ExpressionAttributeValues: { ':emailKey': emailKey(user.email) },
        }),
      );
    } catch (error) {
      // A condition failure here is an id collision: the item is someone else's, so only the lock goes.
      return fail(user, 'write user item', error, { lockLanded: true, userItemMayExist: !isConditionFailure(error) });
    }
    return user;
  };

  const getById = async (id: string): Promise<User | undefined> => {
    let item: Record<string, unknown> | undefined;
    try {
      ({ Item: item } = await client.send(new GetCommand({ TableName: tableName, Key: { pk: userItemKey(id) }, ConsistentRead: true })));
    } catch (error) {
      throw new UserStoreError('read user', error);
    }
    return item === undefined ? undefined : toUser(item);
  };

  return { insert, getById };
};
