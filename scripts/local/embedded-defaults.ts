import { readFile } from 'node:fs/promises';
import type { Env } from './offline-params.ts';
import { LOCAL_AWS_ENV } from './local-aws.ts';
import { redactUrl } from '../../lib/upstream/upstream-call.ts';
import { DEMO_CHAT_EXPORT } from '../../demo/chat-export.ts';

/** What a caller of the local stack needs: the HTTP API needs all three, one invoked function fewer. */
export type LocalService = 'inventory' | 'users' | 'storage';
export const ALL_SERVICES: ReadonlySet<LocalService> = new Set(['inventory', 'users', 'storage']);

/** The newest macOS of the demo feed's copy, so the demo inventory has latest Macs without the feed too. */
const DEFAULT_LATEST_OS_VERSION = '26.6.2';
/** The newest iOS of the demo iOS feed, so the demo mobile devices have latest iPhones and iPads without the feed too. */
const DEFAULT_LATEST_IOS_VERSION = '26.6.1';
/**
 * `LATEST_OS_FEED_URL=demo` (`LATEST_IOS_FEED_URL=demo`, `LATEST_TVOS_FEED_URL=demo`): serve the
 * demo SOFA feeds (demo/sofa/) and point the devices (the mobile devices) at the macOS (iOS, tvOS) one.
 */
const DEMO_FEED_VALUE = 'demo';
const DEFAULT_USERS_TABLE = 'users-local';
const DEFAULT_IDEMPOTENCY_TABLE = 'idempotency-local';
const DEFAULT_IMPORT_BUCKET = 'import-local';
const DEMO_COMPUTER_COUNT = 300;
const DEMO_MOBILE_DEVICE_COUNT = 300;
/** Where the sample importTickets events read from: seeded with a generated chat export. */
const DEMO_CHAT_SOURCE = { bucket: DEFAULT_IMPORT_BUCKET, key: 'incoming/chat.csv' } as const;

const present = (env: Env, name: string): boolean => (env[name] ?? '').trim() !== '';

/**
 * A variable of the local stack that picks one of `choices` (value → what it means): unset or blank
 * is none, and anything else stops the start with a message naming each choice.
 */
const localChoice = <Choice extends string>(env: Env, name: string, choices: Readonly<Record<Choice, string>>): Choice | undefined => {
  const value = env[name]?.trim() ?? '';
  if (value === '') return undefined;
  if (!Object.hasOwn(choices, value)) {
    const named = Object.entries(choices).map(([choice, meaning]) => `"${choice}" (${String(meaning)})`);
    throw new Error(`${name} must be ${named.join(' or ')}, got "${value}"`);
  }
  return value as Choice;
};

/**
 * `LOCAL_REDIS`: a local Redis for the devices to cache in, where REDIS_URL is unset: `cluster`, a
 * TLS Redis Cluster with an ACL user as ElastiCache runs one (scripts/local/redis-cluster.ts), or
 * `node`, one plain redis-server.
 */
type LocalRedisKind = 'cluster' | 'node';
const localRedisKind = (env: Env): LocalRedisKind | undefined =>
  localChoice<LocalRedisKind>(env, 'LOCAL_REDIS', { cluster: 'a local TLS Redis Cluster', node: 'one plain redis-server' });

/**
 * `DEMO_JAMF_VERSION`: which Jamf Pro the demo inventory is (demo/fake-jamf.ts): `current` (11.30
 * and later, the default) or `legacy` (before 11.30), to see the service find an older one's paths.
 */
type DemoJamfVersion = 'current' | 'legacy';
const demoJamfVersion = (env: Env): DemoJamfVersion | undefined =>
  localChoice<DemoJamfVersion>(env, 'DEMO_JAMF_VERSION', { current: 'Jamf Pro 11.30 and later', legacy: 'before 11.30' });

interface DefaultsPlan {
  /** A demo Jamf-compatible inventory, because INVENTORY_URL is unset: the Jamf Pro version it is. */
  inventory: DemoJamfVersion | undefined;
  /** A local DynamoDB-compatible store, because no DynamoDB endpoint and no table name is set. */
  users: boolean;
  /** A local S3-compatible store, because no S3 endpoint is set. */
  storage: boolean;
  /** The demo latest-OS feed, because LATEST_OS_FEED_URL is `demo`. */
  feed: boolean;
  /** The demo latest-iOS feed, because LATEST_IOS_FEED_URL is `demo`. */
  iosFeed: boolean;
  /** The demo latest-tvOS feed, because LATEST_TVOS_FEED_URL is `demo`. */
  tvosFeed: boolean;
  /** A local Redis, because LOCAL_REDIS asks for one, the devices run and REDIS_URL is unset. */
  redis: LocalRedisKind | undefined;
  /** Plain values used where the variable is unset. */
  values: Record<string, string>;
}

/** Decides which embedded servers to start: each only where its variable is unset (docs/local-stack.md). */
const planDefaults = (env: Env, needs: ReadonlySet<LocalService>): DefaultsPlan => {
  const anyEndpoint = present(env, 'AWS_ENDPOINT_URL');
  // A misspelt LOCAL_REDIS (or DEMO_JAMF_VERSION) fails whatever runs, rather than quietly starting nothing.
  const localRedis = localRedisKind(env);
  const jamfVersion = demoJamfVersion(env) ?? 'current';
  const plan: DefaultsPlan = {
    inventory: needs.has('inventory') && !present(env, 'INVENTORY_URL') ? jamfVersion : undefined,
    // A table name without an endpoint names a real table in AWS.
    users:
      needs.has('users') &&
      !anyEndpoint &&
      !present(env, 'AWS_ENDPOINT_URL_DYNAMODB') &&
      !present(env, 'USERS_TABLE') &&
      !present(env, 'IDEMPOTENCY_TABLE'),
    storage: needs.has('storage') && !anyEndpoint && !present(env, 'AWS_ENDPOINT_URL_S3'),
    feed: needs.has('inventory') && env.LATEST_OS_FEED_URL?.trim() === DEMO_FEED_VALUE,
    iosFeed: needs.has('inventory') && env.LATEST_IOS_FEED_URL?.trim() === DEMO_FEED_VALUE,
    tvosFeed: needs.has('inventory') && env.LATEST_TVOS_FEED_URL?.trim() === DEMO_FEED_VALUE,
    // A REDIS_URL that is set wins: nothing is started.
    redis: needs.has('inventory') && !present(env, 'REDIS_URL') ? localRedis : undefined,
    values: {},
  };
  if (needs.has('inventory') && !present(env, 'LATEST_OS_VERSION')) plan.values.LATEST_OS_VERSION = DEFAULT_LATEST_OS_VERSION;
  if (needs.has('inventory') && !present(env, 'LATEST_IOS_VERSION')) plan.values.LATEST_IOS_VERSION = DEFAULT_LATEST_IOS_VERSION;
  if (needs.has('users') && !present(env, 'USERS_TABLE')) plan.values.USERS_TABLE = DEFAULT_USERS_TABLE;
  if (needs.has('users') && !present(env, 'IDEMPOTENCY_TABLE')) plan.values.IDEMPOTENCY_TABLE = DEFAULT_IDEMPOTENCY_TABLE;
  // Local servers accept any credentials, but the SDK refuses to sign without some.
  if ((plan.users || plan.storage) && !present(env, 'AWS_ACCESS_KEY_ID') && !present(env, 'AWS_PROFILE')) {
    Object.assign(plan.values, {
      AWS_ACCESS_KEY_ID: LOCAL_AWS_ENV.AWS_ACCESS_KEY_ID,
      AWS_SECRET_ACCESS_KEY: LOCAL_AWS_ENV.AWS_SECRET_ACCESS_KEY,
    });
  }
  if ((plan.users || plan.storage) && !present(env, 'AWS_REGION')) plan.values.AWS_REGION = LOCAL_AWS_ENV.AWS_REGION;
  return plan;
};

export interface EmbeddedDefaults {
  /** Variables to add to the environment (only ones that were unset). */
  env: Record<string, string>;
  /** One line per default in use, for the banner. */
  notes: string[];
  stop: () => Promise<void>;
}

const SECRET_VARIABLES = new Set(['INVENTORY_CLIENT_SECRET', 'INVENTORY_PASSWORD', 'TICKETING_PASSWORD']);

/** One banner line: the variable's name, then what it is set to. */
const note = (variable: string, text: string): string => `  ${variable.padEnd(26)} ${text}`;

/** A variable's value as the banner shows it: a URL without its credentials (`user:password@`, `?token=`). */
const shown = (name: string, value: string): string => {
  if (SECRET_VARIABLES.has(name)) return '(set)';
  // `…_URL` and the SDK's `AWS_ENDPOINT_URL_<SERVICE>`.
  if (!/_URL(_|$)/.test(name)) return value;
  // `user:pw@host` parses too (as scheme `user:`): only a URL with a host is one.
  if (URL.canParse(value) && new URL(value).host !== '') return redactUrl(value);
  // A word such as `demo` is shown; other text that is no URL may be one with a password it broke.
  return /^[\w.-]*$/.test(value) ? value : '(not a valid URL)';
};

/** The banner's line for a variable that came from the environment (never a secret, nor one inside a URL). */
export const describeConfigured = (env: Env, names: readonly string[]): string[] =>
  names.filter((name) => present(env, name)).map((name) => note(name, `${shown(name, env[name]!)} (from the environment)`));

/** Starts what `planDefaults` asks for, each on a free loopback port; stops them all on `stop()`. */
export const startEmbeddedDefaults = async (
  env: Env,
  needs: ReadonlySet<LocalService>,
  options: { buckets?: readonly string[]; chatSources?: readonly { bucket: string; key: string }[] } = {},
): Promise<EmbeddedDefaults> => {
  const plan = planDefaults(env, needs);
  const stoppers: (() => Promise<void>)[] = [];
  const stop = async () => {
    const results = await Promise.allSettled(
      stoppers
        .splice(0)
        .reverse()
        .map((stopOne) => stopOne()),
    );
    const failed = results.find((result) => result.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
  };
  const overlay: Record<string, string> = { ...plan.values };
  const notes: string[] = [];
  try {
    if (plan.inventory !== undefined) {
      // Loaded only when needed: the demo inventory and the tests' fake Jamf are one module.
      const {
        startFakeJamf,
        generateJamfComputers,
        generateJamfMobileDevices,
        DEMO_JAMF_CREDENTIALS,
        JAMF_PERSONALITIES,
        MOBILE_INVENTORY_PATH,
      } = await import('../../demo/fake-jamf.ts');
      const jamf = await startFakeJamf({
        personality: plan.inventory,
        devices: generateJamfComputers(DEMO_COMPUTER_COUNT),
        mobileDevices: generateJamfMobileDevices(DEMO_MOBILE_DEVICE_COUNT),
        clientId: DEMO_JAMF_CREDENTIALS.clientId,
        clientSecret: DEMO_JAMF_CREDENTIALS.clientSecret,
      });
      stoppers.push(() => jamf.close());
      Object.assign(overlay, {
        INVENTORY_URL: jamf.url,
        INVENTORY_CLIENT_ID: DEMO_JAMF_CREDENTIALS.clientId,
        INVENTORY_CLIENT_SECRET: DEMO_JAMF_CREDENTIALS.clientSecret,
      });
      const paths = JAMF_PERSONALITIES[plan.inventory];
      notes.push(
        note(
          'INVENTORY_URL',
          `${jamf.url} — DEMO DATA: a fake Jamf Pro inventory of ${DEMO_COMPUTER_COUNT} generated computers and ${DEMO_MOBILE_DEVICE_COUNT} mobile devices (${MOBILE_INVENTORY_PATH}; OAuth client "${DEMO_JAMF_CREDENTIALS.clientId}")`,
        ),
        note(
          'DEMO_JAMF_VERSION',
          `${plan.inventory}${present(env, 'DEMO_JAMF_VERSION') ? '' : ' (default)'} — as ${paths.versions}: ${paths.inventory}, ${paths.oauthToken} (DEMO_JAMF_VERSION=${plan.inventory === 'current' ? 'legacy' : 'current'} for the other)`,
        ),
      );
    }
    if (plan.feed || plan.iosFeed || plan.tvosFeed) {
      // One server for every feed: each variable asking for `demo` is pointed at its own.
      const { startFakeSofa } = await import('../../demo/fake-sofa.ts');
      const sofa = await startFakeSofa();
      stoppers.push(() => sofa.close());
      if (plan.feed) {
        overlay.LATEST_OS_FEED_URL = sofa.feedUrl('v2');
        notes.push(
          note(
            'LATEST_OS_FEED_URL',
            `${sofa.feedUrl('v2')} — DEMO DATA: a copy of the SOFA macOS feed of August 2026 (v1 of September 2025 at ${sofa.feedUrl('v1')})`,
          ),
        );
      }
      if (plan.iosFeed) {
        overlay.LATEST_IOS_FEED_URL = sofa.feedUrl('ios-v2');
        notes.push(
          note(
            'LATEST_IOS_FEED_URL',
            `${sofa.feedUrl('ios-v2')} — DEMO DATA: a copy of the SOFA iOS feed (v2) of August 2026 (v1 at ${sofa.feedUrl('ios-v1')})`,
          ),
        );
      }
      if (plan.tvosFeed) {
        overlay.LATEST_TVOS_FEED_URL = sofa.feedUrl('tvos-v2');
        notes.push(
          note(
            'LATEST_TVOS_FEED_URL',
            `${sofa.feedUrl('tvos-v2')} — DEMO DATA: a copy of the SOFA tvOS feed (v2) of August 2026 (v1 of September 2025 at ${sofa.feedUrl('tvos-v1')})`,
          ),
        );
      }
    }
    if (plan.users) {
      const [{ startDynalite, createUsersTable, createIdempotencyTable, seedUser }, { DEMO_USER }] = await Promise.all([
        import('./dynalite.ts'),
        import('../../demo/demo-user.ts'),
      ]);
      const dynamo = await startDynalite();
      stoppers.push(() => dynamo.stop());
      const tableName = overlay.USERS_TABLE ?? DEFAULT_USERS_TABLE;
      const idempotencyTable = overlay.IDEMPOTENCY_TABLE ?? DEFAULT_IDEMPOTENCY_TABLE;
      await createUsersTable({ endpoint: dynamo.endpoint, tableName });
      await createIdempotencyTable({ endpoint: dynamo.endpoint, tableName: idempotencyTable });
      await seedUser({ endpoint: dynamo.endpoint, tableName, user: DEMO_USER });
      overlay.AWS_ENDPOINT_URL_DYNAMODB = dynamo.endpoint;
      notes.push(
        note(
          'AWS_ENDPOINT_URL_DYNAMODB',
          `${dynamo.endpoint} — local DynamoDB-compatible store (dynalite, in memory), tables "${tableName}" and "${idempotencyTable}"`,
        ),
      );
      notes.push(note('', `DEMO DATA: one user, ${DEMO_USER.email} (id ${DEMO_USER.id})`));
    } else if (needs.has('users')) {
      for (const name of ['USERS_TABLE', 'IDEMPOTENCY_TABLE'] as const) {
        const value = plan.values[name];
        if (value !== undefined) notes.push(note(name, `${value} (default name; the table must exist at the configured endpoint)`));
      }
    }
    if (plan.storage) {
      const { startS3Server, createBucket } = await import('./s3-server.ts');
      const s3 = await startS3Server();
      stoppers.push(() => s3.stop());
      const buckets = [...new Set([DEFAULT_IMPORT_BUCKET, ...(options.buckets ?? [])])];
      for (const bucket of buckets) await createBucket({ endpoint: s3.endpoint, bucket });
      const sources = (options.chatSources ?? [DEMO_CHAT_SOURCE]).filter((source) => buckets.includes(source.bucket));
      for (const source of sources) await seedChatExport(s3.endpoint, source);
      overlay.AWS_ENDPOINT_URL_S3 = s3.endpoint;
      const bucketList = buckets.map((bucket) => `"${bucket}"`).join(', ');
      notes.push(
        note(
          'AWS_ENDPOINT_URL_S3',
          `${s3.endpoint} — local S3-compatible store (in memory), bucket${buckets.length > 1 ? 's' : ''} ${bucketList}`,
        ),
      );
      for (const source of sources)
        notes.push(note('', `s3://${source.bucket}/${source.key} — DEMO DATA: the ${DEMO_CHAT_EXPORT.rows}-row demo/chat-export.csv`));
    }
    if (plan.redis === 'cluster') {
      const { startLocalRedisCluster } = await import('./redis-cluster.ts');
      const cluster = await startLocalRedisCluster();
      stoppers.push(() => cluster.stop());
      // The CA belongs with this URL: a REDIS_TLS_CA_FILE of the environment is for another cluster.
      Object.assign(overlay, { REDIS_URL: cluster.url, REDIS_TLS_CA_FILE: cluster.caFile });
      if (!present(env, 'REDIS_CLUSTER')) overlay.REDIS_CLUSTER = 'auto';
      const nodes = await cluster.nodes();
      const ports = (role: 'master' | 'replica') =>
        nodes
          .filter((node) => node.role === role)
          .map((node) => node.port)
          .join(', ');
      notes.push(
        note(
          'REDIS_URL',
          `${shown('REDIS_URL', cluster.url)} — local Redis Cluster (LOCAL_REDIS=cluster), TLS only, ACL user "${cluster.user}" (password in the URL the handlers get; user "default" off)`,
        ),
        note(
          '',
          `masters on 127.0.0.1:${ports('master')}, replicas on ${ports('replica')} (cluster bus: each port + 10000); nodes announced as 127.0.0.1, certificate for "localhost" only`,
        ),
        note('REDIS_TLS_CA_FILE', `${cluster.caFile} — the throw-away CA that signed the nodes' certificate`),
      );
      if (overlay.REDIS_CLUSTER !== undefined) notes.push(note('REDIS_CLUSTER', `${overlay.REDIS_CLUSTER} (default)`));
    } else if (plan.redis === 'node') {
      const { startLocalRedisNode } = await import('./redis-node.ts');
      const node = await startLocalRedisNode();
      stoppers.push(() => node.stop());
      overlay.REDIS_URL = node.url;
      notes.push(note('REDIS_URL', `${node.url} — local redis-server (LOCAL_REDIS=node): one node, no TLS, no password, in memory`));
    }
    if (needs.has('inventory')) {
      if (plan.values.LATEST_OS_VERSION !== undefined) notes.push(note('LATEST_OS_VERSION', `${plan.values.LATEST_OS_VERSION} (default)`));
      if (plan.values.LATEST_IOS_VERSION !== undefined)
        notes.push(note('LATEST_IOS_VERSION', `${plan.values.LATEST_IOS_VERSION} (default)`));
      if (!present(env, 'REDIS_URL') && plan.redis === undefined)
        notes.push(note('REDIS_URL', 'unset — memory cache only (LOCAL_REDIS=cluster or LOCAL_REDIS=node starts a local Redis)'));
      if (present(env, 'REDIS_URL') && localRedisKind(env) !== undefined)
        notes.push(note('LOCAL_REDIS', `${env.LOCAL_REDIS!.trim()} ignored: REDIS_URL is set`));
      if (plan.inventory === undefined && demoJamfVersion(env) !== undefined)
        notes.push(note('DEMO_JAMF_VERSION', `${env.DEMO_JAMF_VERSION!.trim()} ignored: INVENTORY_URL is set`));
    }
    if (plan.values.AWS_ACCESS_KEY_ID !== undefined) notes.push(note('AWS_ACCESS_KEY_ID', 'test (any key works for the local stores)'));
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }
  return { env: overlay, notes, stop };
};

/** Puts the demo chat export where an import reads it, so the sample events work offline. */
const seedChatExport = async (endpoint: string, target: { bucket: string; key: string }): Promise<void> => {
  const [{ localS3Client }, { PutObjectCommand }] = await Promise.all([import('./s3-server.ts'), import('@aws-sdk/client-s3')]);
  const client = localS3Client(endpoint);
  try {
    const body = await readFile(DEMO_CHAT_EXPORT.file);
    await client.send(new PutObjectCommand({ Bucket: target.bucket, Key: target.key, Body: body, ContentType: 'text/csv' }));
  } finally {
    client.destroy();
  }
};
