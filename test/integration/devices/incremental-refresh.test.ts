import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeRedisClusterTier, type ClusterTier } from '../../../lib/cache/cluster-tier.ts';
import { deviceSnapshotCodec } from '../../../lib/devices/device-snapshot-codec.ts';
import { deviceText, type DeviceSnapshot } from '../../../lib/devices/device-snapshot.ts';
import { makeRefreshReader, makeSnapshotReader } from '../../../lib/devices/read-snapshot.ts';
import { makeDevicesRefresh } from '../../../lib/devices/refresh-devices.ts';
import { makeJamfClient } from '../../../lib/inventory/jamf-client.ts';
import { datedJamfComputer, DEMO_JAMF_CREDENTIALS, generateJamfComputers, startFakeJamf, type FakeJamf, type JamfComputer } from '../../../demo/fake-jamf.ts';
import { connectRawClient, startRedisServer, type RedisServer } from '../../support/redis-server.ts';
import { recordingLogger } from '../../support/recording-logger.ts';

/**
 * The incremental refresh against the fake Jamf Pro and a real redis-server: after any sequence of
 * edits (dated as Jamf dates them), enrolments and removals, the snapshot it writes is the one a full
 * read of the inventory at that moment gives, byte for byte.
 */
const KEY = 'devices:v5:{incremental-property}';
const BASE = generateJamfComputers(120, 61);
/** Records enrolled by the steps, each taking the next id. */
const ENROLLED = generateJamfComputers(60, 62);

type Change = 'contact only' | 'renamed' | 'os updated' | 'user changed' | 'unmanaged' | 'board changed' | 'serial cleared';
type Edit = { kind: 'edit'; at: number; field: 'lastContact' | 'reportDate'; change: Change };
type Operation = Edit | { kind: 'enrol' } | { kind: 'remove'; at: number };

const operation: fc.Arbitrary<Operation> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('edit' as const), at: fc.nat(), field: fc.constantFrom('lastContact' as const, 'reportDate' as const), change: fc.constantFrom<Change>('contact only', 'renamed', 'os updated', 'user changed', 'unmanaged', 'board changed', 'serial cleared') }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'enrol' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('remove' as const), at: fc.nat() }) },
);
const steps = fc.array(fc.array(operation, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 5 });

const section = (record: JamfComputer, name: string): Record<string, unknown> =>
  typeof record[name] === 'object' && record[name] !== null ? (record[name] as Record<string, unknown>) : {};

/** The record after `change`, its last contact or inventory report dated `now`, as Jamf does. */
const edited = (record: JamfComputer, { field, change }: Edit, now: string, serial: number): JamfComputer => {
  const changed: JamfComputer = { ...record };
  if (change === 'renamed') changed.general = { ...section(record, 'general'), name: `renamed-${serial}` };
  if (change === 'os updated') changed.operatingSystem = { ...section(record, 'operatingSystem'), version: '26.6.2', build: '25G83', rapidSecurityResponse: null };
  if (change === 'user changed') changed.userAndLocation = { ...section(record, 'userAndLocation'), username: `user.${serial}`, email: `user.${serial}@example.com` };
  if (change === 'unmanaged') changed.general = { ...section(record, 'general'), remoteManagement: { managed: false } };
  if (change === 'board changed') changed.operatingSystem = { ...section(record, 'operatingSystem'), softwareUpdateDeviceId: `J${serial}AP` };
  if (change === 'serial cleared') changed.hardware = { ...section(record, 'hardware'), serialNumber: '' };
  return datedJamfComputer(changed, field, now);
};

describe('incremental refresh: merging the changes gives what a full read gives', () => {
  let redis: RedisServer;
  let raw: Redis;
  let jamf: FakeJamf;
  let cluster: ClusterTier;

  beforeAll(async () => {
    redis = await startRedisServer();
    raw = await connectRawClient(redis.url);
    jamf = await startFakeJamf({ devices: BASE });
    cluster = makeRedisClusterTier({
      redis: { url: redis.url, cluster: 'off', tlsCaFile: undefined, password: undefined },
      logger: recordingLogger(),
      commandTimeoutMs: 5_000,
    });
  });
  afterAll(async () => {
    await cluster.close();
    raw.disconnect();
    await jamf.close();
    await redis.stop();
  });

  it('writes, after every step of edits, enrolments and removals, the snapshot a full read of the inventory gives, byte for byte', async () => {
    // Pages of 20 records: a filtered read of many changes spans several pages.
    const inventory = makeJamfClient({ baseUrl: jamf.url, auth: { kind: 'oauth', clientId: DEMO_JAMF_CREDENTIALS.clientId, clientSecret: async () => DEMO_JAMF_CREDENTIALS.clientSecret }, pageSize: 20 });
    const refresh = makeDevicesRefresh({
      readSnapshot: makeRefreshReader({ inventory, fullReadEveryMs: 3_600_000 }),
      cluster,
      codec: deviceSnapshotCodec,
      key: KEY,
      servableMs: 3_600_000,
      lockMs: 60_000,
    });
    const readFully = makeSnapshotReader({ inventory });
    const remaining = () => 60_000;
    const stored = async (): Promise<DeviceSnapshot> => (await cluster.read(KEY, deviceSnapshotCodec.decode))!.value;
    let serial = 0;

    await fc.assert(
      fc.asyncProperty(steps, async (sequence) => {
        let records = [...BASE];
        let enrolled = 0;
        jamf.setDevices(records);
        await raw.flushall();
        expect(await refresh(remaining)).toMatchObject({ outcome: 'refreshed', read: 'full', fullReadReason: 'no previous snapshot' });
        for (const operations of sequence) {
          const now = new Date().toISOString();
          for (const step of operations) {
            serial += 1;
            if (step.kind === 'edit' && records.length > 0) {
              const at = step.at % records.length;
              records = records.with(at, edited(records[at]!, step, now, serial));
            } else if (step.kind === 'remove' && records.length > 0) {
              records = records.toSpliced(step.at % records.length, 1);
            } else if (step.kind === 'enrol') {
              const last = records.reduce((highest, record) => Math.max(highest, Number(record.id)), 0);
              const fresh = { ...ENROLLED[enrolled % ENROLLED.length]!, id: String(last + 1 + (serial % 3)) };
              enrolled += 1;
              records = [...records, datedJamfComputer(datedJamfComputer(fresh, 'lastContact', now), 'reportDate', now)];
            }
          }
          jamf.setDevices(records);
          const removed = operations.some((step) => step.kind === 'remove');
          const outcome = await refresh(remaining);
          expect(outcome).toMatchObject(removed ? { outcome: 'refreshed', read: 'full', fullReadReason: 'count changed' } : { outcome: 'refreshed', read: 'incremental' });
          const written = await stored();
          const expected = await readFully(remaining);
          expect(written.count).toBe(expected.count);
          expect(written.id).toBe(expected.id);
          expect(deviceText(written, 0, written.count)).toBe(deviceText(expected, 0, expected.count));
          expect([...written.boardKey].map((key) => written.boards[key])).toEqual([...expected.boardKey].map((key) => expected.boards[key]));
        }
      }),
      { numRuns: 25 },
    );
  }, 120_000);
});
