import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeRedisClusterTier, type ClusterTier } from '../../../lib/cache/cluster-tier.ts';
import { deviceSnapshotCodec } from '../../../lib/devices/device-snapshot-codec.ts';
import { deviceText, type DeviceSnapshot } from '../../../lib/devices/device-snapshot.ts';
import { COMPUTERS, MOBILE_DEVICES, type InventoryKind } from '../../../lib/devices/inventory-kind.ts';
import { makeSnapshotReader } from '../../../lib/devices/device-inventory.ts';
import { makeRefreshReader } from '../../../lib/devices/refresh-reader.ts';
import { makeDevicesRefresh } from '../../../lib/devices/refresh-devices.ts';
import { makeJamfClient } from '../../../lib/inventory/jamf-client.ts';
import {
  datedJamfComputer,
  datedJamfMobileDevice,
  DEMO_JAMF_CREDENTIALS,
  generateJamfComputers,
  generateJamfMobileDevices,
  startFakeJamf,
  type FakeJamf,
  type JamfComputer,
  type JamfMobileDevice,
} from '../../../demo/fake-jamf.ts';
import { connectRawClient, startRedisServer, type RedisServer } from '../../support/redis-server.ts';
import { recordingLogger } from '../../support/recording-logger.ts';

/**
 * The incremental refresh of each inventory against the fake Jamf Pro and a real redis-server:
 * after any sequence of edits (dated as Jamf dates them), enrolments and removals, the snapshot it
 * writes is the one a full read of the inventory at that moment gives, byte for byte.
 */
type JamfRecord = Record<string, unknown>;

/** What the property needs of one inventory: its kind, its records, and Jamf's edits of them, each dated. */
interface Inventory {
  kind: InventoryKind;
  base: readonly JamfRecord[];
  /** Records enrolled by the steps, each taking the next id. */
  enrolled: readonly JamfRecord[];
  set: (jamf: FakeJamf, records: readonly JamfRecord[]) => void;
  /** The changes a record may go through, `serial` making each new; `now` is when Jamf dates it. */
  edits: readonly ((record: JamfRecord, serial: number, now: string) => JamfRecord)[];
  /** An enrolled record as Jamf dates it. */
  enrol: (record: JamfRecord, now: string) => JamfRecord;
}

const section = (record: JamfRecord, name: string): Record<string, unknown> =>
  typeof record[name] === 'object' && record[name] !== null ? (record[name] as Record<string, unknown>) : {};
/** `record` with `fields` set in its section `name`. */
const withSection = (record: JamfRecord, name: string, fields: Record<string, unknown>): JamfRecord => ({
  ...record,
  [name]: { ...section(record, name), ...fields },
});

/** A computer's changes, each dated by its last contact or by its inventory report. */
const COMPUTER_CHANGES: readonly ((record: JamfRecord, serial: number) => JamfRecord)[] = [
  (record) => record, // contact only
  (record, serial) => withSection(record, 'general', { name: `renamed-${serial}` }),
  (record) => withSection(record, 'operatingSystem', { version: '26.6.2', build: '25G83', rapidSecurityResponse: null }),
  (record, serial) => withSection(record, 'userAndLocation', { username: `user.${serial}`, email: `user.${serial}@example.com` }),
  (record) => withSection(record, 'general', { remoteManagement: { managed: false } }),
  (record, serial) => withSection(record, 'operatingSystem', { softwareUpdateDeviceId: `J${serial}AP` }),
  (record) => withSection(record, 'hardware', { serialNumber: '' }),
];
const COMPUTERS_INVENTORY: Inventory = {
  kind: COMPUTERS,
  base: generateJamfComputers(120, 61),
  enrolled: generateJamfComputers(60, 62),
  set: (jamf, records) => jamf.setDevices(records as JamfComputer[]),
  edits: COMPUTER_CHANGES.flatMap((change) =>
    (['lastContact', 'reportDate'] as const).map(
      (field) => (record: JamfRecord, serial: number, now: string) => datedJamfComputer(change(record, serial) as JamfComputer, field, now),
    ),
  ),
  enrol: (record, now) => datedJamfComputer(datedJamfComputer(record as JamfComputer, 'lastContact', now), 'reportDate', now),
};

/** A mobile device's changes, each dated by its inventory update (a device Jamf could not type gains a `general` holding the date). */
const MOBILE_CHANGES: readonly ((record: JamfRecord, serial: number) => JamfRecord)[] = [
  (record) => record, // inventory update only
  (record, serial) => withSection(record, 'general', { displayName: `renamed-${serial}` }),
  (record) => withSection(record, 'general', { osVersion: '26.6.1', osBuild: '23G93', osRapidSecurityResponse: null }),
  (record, serial) => withSection(record, 'userAndLocation', { username: `user.${serial}`, emailAddress: `user.${serial}@example.com` }),
  (record) => withSection(record, 'general', { managed: false, supervised: null }),
  (record, serial) => withSection(record, 'hardware', { modelIdentifier: `iPhone${serial},1` }),
  (record) => withSection(record, 'hardware', { serialNumber: '' }),
];
const MOBILE_INVENTORY: Inventory = {
  kind: MOBILE_DEVICES,
  base: generateJamfMobileDevices(120, 63),
  enrolled: generateJamfMobileDevices(60, 64),
  set: (jamf, records) => jamf.setMobileDevices(records as JamfMobileDevice[]),
  edits: MOBILE_CHANGES.map(
    (change) => (record: JamfRecord, serial: number, now: string) => datedJamfMobileDevice(change(record, serial) as JamfMobileDevice, now),
  ),
  enrol: (record, now) => datedJamfMobileDevice(record as JamfMobileDevice, now),
};

type Operation = { kind: 'edit'; at: number; edit: number } | { kind: 'enrol' } | { kind: 'remove'; at: number };
const operation: fc.Arbitrary<Operation> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('edit' as const), at: fc.nat(), edit: fc.nat() }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'enrol' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('remove' as const), at: fc.nat() }) },
);
const steps = fc.array(fc.array(operation, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 5 });

describe('incremental refresh: merging the changes gives what a full read gives', () => {
  let redis: RedisServer;
  let raw: Redis;
  let jamf: FakeJamf;
  let cluster: ClusterTier;

  beforeAll(async () => {
    redis = await startRedisServer();
    raw = await connectRawClient(redis.url);
    jamf = await startFakeJamf();
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

  it.each([COMPUTERS_INVENTORY, MOBILE_INVENTORY])(
    'writes, after every step of edits, enrolments and removals of $kind.name, the snapshot a full read of the inventory gives, byte for byte',
    async (inventory) => {
      const { kind } = inventory;
      const key = `${kind.keyPrefix}:v6:{incremental-property}`;
      const idOf = (record: JamfRecord) => Number(record[kind.endpoint.idField]);
      // Pages of 20 records: a filtered read of many changes spans several pages.
      const client = makeJamfClient({
        baseUrl: jamf.url,
        auth: { kind: 'oauth', clientId: DEMO_JAMF_CREDENTIALS.clientId, clientSecret: async () => DEMO_JAMF_CREDENTIALS.clientSecret },
        inventory: kind.endpoint,
        pageSize: 20,
      });
      const refresh = makeDevicesRefresh({
        readSnapshot: makeRefreshReader({ inventory: client, fullReadEveryMs: 3_600_000, kind }),
        cluster,
        codec: deviceSnapshotCodec,
        key,
        servableMs: 3_600_000,
        lockMs: 60_000,
      });
      const readFully = makeSnapshotReader({ inventory: client, kind });
      const remaining = () => 60_000;
      const stored = async (): Promise<DeviceSnapshot> => (await cluster.read(key, deviceSnapshotCodec.decode))!.value;
      let serial = 0;

      await fc.assert(
        fc.asyncProperty(steps, async (sequence) => {
          let records = [...inventory.base];
          let enrolled = 0;
          // Jamf never gives an id twice: a device enrolled after the highest was removed takes a higher one.
          let lastId = records.reduce((highest, record) => Math.max(highest, idOf(record)), 0);
          inventory.set(jamf, records);
          await raw.flushall();
          expect(await refresh(remaining)).toMatchObject({ outcome: 'refreshed', read: 'full', fullReadReason: 'no previous snapshot' });
          for (const operations of sequence) {
            const now = new Date().toISOString();
            const before = records.map(idOf);
            for (const step of operations) {
              serial += 1;
              if (step.kind === 'edit' && records.length > 0) {
                const at = step.at % records.length;
                records = records.with(at, inventory.edits[step.edit % inventory.edits.length]!(records[at]!, serial, now));
              } else if (step.kind === 'remove' && records.length > 0) {
                records = records.toSpliced(step.at % records.length, 1);
              } else if (step.kind === 'enrol') {
                lastId += 1 + (serial % 3);
                const fresh = { ...inventory.enrolled[enrolled % inventory.enrolled.length]!, [kind.endpoint.idField]: String(lastId) };
                enrolled += 1;
                records = [...records, inventory.enrol(fresh, now)];
              }
            }
            inventory.set(jamf, records);
            // Only a device the last refresh held and Jamf no longer has changes the count: one enrolled
            // and removed within the step never reaches either snapshot.
            const present = new Set(records.map(idOf));
            const removed = before.some((id) => !present.has(id));
            const outcome = await refresh(remaining);
            expect(outcome).toMatchObject(
              removed
                ? { outcome: 'refreshed', read: 'full', fullReadReason: 'count changed' }
                : { outcome: 'refreshed', read: 'incremental' },
            );
            const written = await stored();
            const expected = await readFully(remaining);
            expect(written.count).toBe(expected.count);
            expect(written.id).toBe(expected.id);
            expect(deviceText(written, 0, written.count)).toBe(deviceText(expected, 0, expected.count));
            expect([...written.boardKey].map((index) => written.boards[index])).toEqual(
              [...expected.boardKey].map((index) => expected.boards[index]),
            );
          }
        }),
        { numRuns: 25 },
      );
    },
    120_000,
  );
});
