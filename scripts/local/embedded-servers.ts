import { readFile } from 'node:fs/promises';
import { DEMO_CHAT_EXPORT } from '../../demo/chat-export.ts';
import { present } from '../../lib/env-values.ts';
import { note, shown } from './embedded-banner.ts';
import {
  DEFAULT_IDEMPOTENCY_TABLE,
  DEFAULT_IMPORT_BUCKET,
  DEFAULT_USERS_TABLE,
  type DefaultsPlan,
  type DemoJamfVersion,
  type LocalRedisKind,
} from './embedded-plan.ts';
import type { Env } from './offline-params.ts';

const DEMO_COMPUTER_COUNT = 300;
const DEMO_MOBILE_DEVICE_COUNT = 300;
/** Where the sample importTickets events read from: seeded with a generated chat export. */
const DEMO_CHAT_SOURCE = { bucket: DEFAULT_IMPORT_BUCKET, key: 'incoming/chat.csv' } as const;

/** What the embedded servers add as each starts: variables, banner lines, and its stop (added as soon as it runs). */
export interface Started {
  overlay: Record<string, string>;
  notes: string[];
  stoppers: (() => Promise<void>)[];
}

/** The demo Jamf Pro inventory (demo/fake-jamf.ts), as the Jamf Pro version `inventory`. */
export const startDemoInventory = async (env: Env, inventory: DemoJamfVersion, started: Started): Promise<void> => {
  const { overlay, notes, stoppers } = started;
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
    personality: inventory,
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
  const paths = JAMF_PERSONALITIES[inventory];
  notes.push(
    note(
      'INVENTORY_URL',
      `${jamf.url} — DEMO DATA: a fake Jamf Pro inventory of ${DEMO_COMPUTER_COUNT} generated computers and ${DEMO_MOBILE_DEVICE_COUNT} mobile devices (${MOBILE_INVENTORY_PATH}; OAuth client "${DEMO_JAMF_CREDENTIALS.clientId}")`,
    ),
    note(
      'DEMO_JAMF_VERSION',
      `${inventory}${present(env, 'DEMO_JAMF_VERSION') ? '' : ' (default)'} — as ${paths.versions}: ${paths.inventory}, ${paths.oauthToken} (DEMO_JAMF_VERSION=${inventory === 'current' ? 'legacy' : 'current'} for the other)`,
    ),
  );
};

/** One server of the demo SOFA feeds (demo/fake-sofa.ts) for the feeds the plan asks for. */
export const startDemoFeeds = async (plan: DefaultsPlan, started: Started): Promise<void> => {
  const { overlay, notes, stoppers } = started;
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
};

/** The local DynamoDB-compatible store (dynalite), with its two tables and the demo user. */
export const startLocalDynamo = async (started: Started): Promise<void> => {
  const { overlay, notes, stoppers } = started;
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
};

/** The local S3-compatible store, with its buckets and the demo chat export where the imports read it. */
export const startLocalS3 = async (
  options: { buckets?: readonly string[]; chatSources?: readonly { bucket: string; key: string }[] },
  started: Started,
): Promise<void> => {
  const { overlay, notes, stoppers } = started;
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
};

/** The local Redis LOCAL_REDIS asks for: a TLS Redis Cluster (`cluster`) or one plain redis-server (`node`). */
export const startLocalRedis = async (env: Env, kind: LocalRedisKind, started: Started): Promise<void> => {
  const { overlay, notes, stoppers } = started;
  if (kind === 'cluster') {
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
  } else if (kind === 'node') {
    const { startLocalRedisNode } = await import('./redis-node.ts');
    const node = await startLocalRedisNode();
    stoppers.push(() => node.stop());
    overlay.REDIS_URL = node.url;
    notes.push(note('REDIS_URL', `${node.url} — local redis-server (LOCAL_REDIS=node): one node, no TLS, no password, in memory`));
  }
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
