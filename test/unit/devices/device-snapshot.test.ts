import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { deviceSnapshotCodec } from '../../../lib/devices/device-snapshot-codec.ts';
import {} from '../../../lib/devices/build-snapshot.ts';
import { decideLatest, decisionsAt, everyDevice, renderDevices } from '../../../lib/devices/decide-latest.ts';
import { deviceText, type DeviceSnapshot } from '../../../lib/devices/device-snapshot.ts';
import { snapshotDevices, buildComputerSnapshot } from '../../support/snapshot-devices.ts';
import type { InventoryDevice } from '../../../lib/devices/map-inventory-record.ts';
import { fixedReference } from '../../../lib/latest-os/latest-reference.ts';
import { generateJamfComputers } from '../../../demo/fake-jamf.ts';
import { mapComputer } from '../../support/inventory-records.ts';

const RESPONSE_ORDER = [
  'id',
  'udid',
  'name',
  'serial_number',
  'model',
  'model_identifier',
  'os_name',
  'os_version',
  'os_build',
  'os_rapid_security_response',
  'os_is_latest',
  'os_latest_version',
  'last_contact_at',
  'last_inventory_at',
  'username',
  'email',
  'supervised',
  'managed',
] as const;

/** The response JSON of one device, written independently of the code under test: ASCII, the rest escaped. */
const expectedJson = (device: InventoryDevice, reference: string): string => {
  const decision = fixedReference(reference).decide({
    osVersion: device.os_version,
    response: device.os_rapid_security_response,
    boardId: device.board_id,
    modelIdentifier: device.model_identifier,
  });
  const withFlag: Record<string, unknown> = { ...device, os_is_latest: decision.latest, os_latest_version: decision.reference };
  return JSON.stringify(
    Object.fromEntries(RESPONSE_ORDER.filter((key) => withFlag[key] !== undefined).map((key) => [key, withFlag[key]])),
  ).replace(/[\u0080-\uffff]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
};

const all = (snapshot: DeviceSnapshot): number[] => Array.from({ length: snapshot.count }, (_, index) => index);

const text = fc.oneof(fc.string({ minLength: 1, maxLength: 12 }), fc.constantFrom('macOS', 'Mac OS X', 'Mac14,2', 'é"\\\u2028🎉'));
const device = (id: number): fc.Arbitrary<InventoryDevice> =>
  fc
    .record(
      {
        udid: text,
        name: text,
        serial_number: text,
        model: text,
        model_identifier: text,
        os_name: text,
        os_version: fc.constantFrom('26.1', '15.7.2', '15.2.0', '26.0 (25A354)', '26.3.1', '26.3.1 (a)', '15.10', '1', 'x'),
        os_build: text,
        os_rapid_security_response: fc.constantFrom('(a)', '(c)', 'x'),
        last_contact_at: fc.constantFrom('2026-11-01T10:00:00Z', '2026-11-20T09:15:00.123Z', 'garbage'),
        last_inventory_at: fc.constantFrom('2026-11-01T09:00:00Z', 'garbage'),
        username: text,
        email: text,
        supervised: fc.boolean(),
        managed: fc.boolean(),
        board_id: fc.oneof(text, fc.constantFrom('J413AP', 'J700AP')),
      },
      { requiredKeys: [] },
    )
    .map((fields) => ({ id: String(id), ...fields }));
const fleets = fc.array(fc.nat(40), { maxLength: 25 }).chain((gaps) => {
  let id = 0;
  return fc.tuple(...gaps.map((gap) => device((id += gap + 1))));
});

/** The snapshot built again from its own devices, and what must match: the same text and id, and the same columns. */
const expectRebuilt = (snapshot: DeviceSnapshot) => {
  const rebuilt = buildComputerSnapshot(snapshotDevices(snapshot), snapshot.readAt, snapshot.fullReadAt);
  const { text: _rebuiltText, ...rebuiltColumns } = rebuilt;
  const { text: _snapshotText, ...snapshotColumns } = snapshot;
  expect(deviceText(rebuilt, 0, rebuilt.count)).toBe(deviceText(snapshot, 0, snapshot.count));
  expect(rebuiltColumns).toEqual(snapshotColumns);
};

describe('device snapshot', () => {
  const devices = generateJamfComputers(200, 77).map((record) => mapComputer(record)!);

  it('renders each device as its documented JSON, flagged against the reference, for any fleet', () => {
    fc.assert(
      fc.property(fleets, fc.constantFrom('26.1', '15.7', '26.3.1 (a)', 'not-a-version'), (fleet, reference) => {
        const snapshot = buildComputerSnapshot(fleet, 0);
        const body = renderDevices(snapshot, decisionsAt(decideLatest(snapshot, everyDevice(fixedReference(reference))), 0), all(snapshot));
        expect(body).toBe(`[${fleet.map((entry) => expectedJson(entry, reference)).join(',')}]`);
      }),
      { numRuns: 100 },
    );
  });

  it('renders a generated fleet byte for byte as the devices would serialize, for several references', () => {
    const snapshot = buildComputerSnapshot(devices, 0);
    for (const reference of ['26.1', '15.10', '26.0 (25A354)', 'not-a-version']) {
      const body = renderDevices(snapshot, decisionsAt(decideLatest(snapshot, everyDevice(fixedReference(reference))), 0), all(snapshot));
      expect(body).toBe(`[${devices.map((entry) => expectedJson(entry, reference)).join(',')}]`);
    }
  });

  it('renders only the devices asked for, in their order, and an empty page as []', () => {
    const snapshot = buildComputerSnapshot(devices, 0);
    const decisions = decisionsAt(decideLatest(snapshot, everyDevice(fixedReference('26.1'))), 0);
    expect(JSON.parse(renderDevices(snapshot, decisions, [3, 5, 199])).map((entry: { id: string }) => entry.id)).toEqual(
      [3, 5, 199].map((index) => devices[index]!.id),
    );
    expect(renderDevices(snapshot, decisions, [])).toBe('[]');
    const empty = buildComputerSnapshot([], 0);
    expect(renderDevices(empty, decisionsAt(decideLatest(empty, everyDevice(fixedReference('26.1'))), 0), [])).toBe('[]');
  });

  it('names equal inventories alike and different ones apart, whenever they were read', () => {
    expect(buildComputerSnapshot(devices, 1).id).toBe(buildComputerSnapshot(structuredClone(devices), 2).id);
    const changed = devices.map((entry, index) => (index === 10 ? { ...entry, name: 'renamed' } : entry));
    expect(buildComputerSnapshot(changed, 1).id).not.toBe(buildComputerSnapshot(devices, 1).id);
  });

  it('gives back the devices it was built from, board ids included, and building them again gives the same snapshot', () => {
    fc.assert(
      fc.property(fleets, (fleet) => {
        const snapshot = buildComputerSnapshot(fleet, 2_000, 1_000);
        expect(snapshotDevices(snapshot)).toEqual(fleet);
        expectRebuilt(snapshot);
      }),
      { numRuns: 100 },
    );
    expect(snapshotDevices(buildComputerSnapshot([], 0))).toEqual([]);
  });

  it('keeps the filter columns: booleans, lower-cased names, contact times', () => {
    const snapshot = buildComputerSnapshot(
      [
        {
          id: '1',
          os_name: 'macOS',
          model_identifier: 'Mac14,2',
          managed: true,
          supervised: false,
          last_contact_at: '2026-11-01T00:00:00Z',
        },
        { id: '2', os_name: 'Mac OS X', last_contact_at: 'yesterday' },
      ],
      0,
    );
    expect([...snapshot.managed]).toEqual([1, -1]);
    expect([...snapshot.supervised]).toEqual([0, -1]);
    expect(snapshot.osNames[snapshot.osNameKey[1]!]).toBe('mac os x');
    expect(snapshot.models[snapshot.modelKey[0]!]).toBe('mac14,2');
    expect(snapshot.modelKey[1]).toBe(0);
    expect(snapshot.lastContact[0]).toBe(Date.parse('2026-11-01T00:00:00Z'));
    expect(snapshot.lastContact[1]).toBeNaN();
  });
});

describe('device snapshot codec', () => {
  const snapshot = buildComputerSnapshot(
    generateJamfComputers(300, 5).map((record) => mapComputer(record)!),
    1_795_000_000_000,
  );
  const encoded = deviceSnapshotCodec.encode(snapshot);

  it('round-trips any snapshot unchanged', async () => {
    await fc.assert(
      fc.asyncProperty(fleets, fc.nat(), fc.nat(), async (fleet, readAt, fullReadAt) => {
        const original = buildComputerSnapshot(fleet, readAt, fullReadAt);
        const decoded = await deviceSnapshotCodec.decode(deviceSnapshotCodec.encode(original));
        const { text: _decodedText, ...decodedColumns } = decoded!;
        const { text: _originalText, ...originalColumns } = original;
        expect(decodedColumns).toEqual(originalColumns);
        expect(deviceText(decoded!, 0, decoded!.count)).toBe(deviceText(original, 0, original.count));
      }),
      { numRuns: 60 },
    );
  });

  it('renders any page of a decoded snapshot as the original renders it, across its chunks of 1,000 devices', async () => {
    const original = buildComputerSnapshot(
      generateJamfComputers(2_500, 9).map((record) => mapComputer(record)!),
      1_795_000_000_000,
    );
    const decoded = (await deviceSnapshotCodec.decode(deviceSnapshotCodec.encode(original)))!;
    expect(decoded.text.chunkDevices).toBe(1_000);
    const flags = decisionsAt(decideLatest(original, everyDevice(fixedReference('26.1'))), 0);
    fc.assert(
      fc.property(fc.uniqueArray(fc.nat(original.count - 1), { maxLength: 60 }), (picked) => {
        const indexes = [...picked].sort((a, b) => a - b);
        expect(renderDevices(decoded, flags, indexes)).toBe(renderDevices(original, flags, indexes));
      }),
      { numRuns: 100 },
    );
    // A page across a chunk's edge, and the last devices.
    for (const indexes of [
      [998, 999, 1000, 1001],
      [2_497, 2_498, 2_499],
    ])
      expect(renderDevices(decoded, flags, indexes)).toBe(renderDevices(original, flags, indexes));
  });

  it('keeps the JSON ASCII: other characters travel as escapes and read back as themselves', () => {
    const fleet: InventoryDevice[] = [{ id: '1', name: 'Zoë’s MacBook 🎉', username: 'zoë' }];
    const snapshot = buildComputerSnapshot(fleet, 0);
    // JSON escapes control characters itself: what is left is printable ASCII.
    expect(deviceText(snapshot, 0, snapshot.count)).toMatch(/^[ -~]*$/);
    expect(
      JSON.parse(renderDevices(snapshot, decisionsAt(decideLatest(snapshot, everyDevice(fixedReference('26.1'))), 0), [0]))[0],
    ).toMatchObject({
      name: 'Zoë’s MacBook 🎉',
      username: 'zoë',
    });
  });

  it('stores the rendered devices compressed, well below their own size', () => {
    expect(encoded.length).toBeLessThan(Buffer.byteLength(deviceText(snapshot, 0, snapshot.count)) / 3);
  });

  it('gives back the devices of a snapshot read from the cluster, every chunk of it, byte for byte', async () => {
    const fleet = generateJamfComputers(2_500, 17).map((record) => mapComputer(record)!);
    const original = buildComputerSnapshot(fleet, 1_795_000_060_000, 1_795_000_000_000);
    const decoded = (await deviceSnapshotCodec.decode(deviceSnapshotCodec.encode(original)))!;
    expect(decoded.text.chunkDevices).toBe(1_000);
    expect(decoded.fullReadAt).toBe(1_795_000_000_000);
    const devices = snapshotDevices(decoded);
    expect(devices).toEqual(fleet);
    expect(devices.filter((entry) => entry.board_id !== undefined).length).toBeGreaterThan(2_000);
    expectRebuilt(decoded);
    expect(
      deviceSnapshotCodec
        .encode(buildComputerSnapshot(devices, decoded.readAt, decoded.fullReadAt))
        .equals(deviceSnapshotCodec.encode(original)),
    ).toBe(true);
  });

  it("tells a value's stamp from its first bytes alone", () => {
    expect(deviceSnapshotCodec.stampOf(encoded.subarray(0, deviceSnapshotCodec.stampBytes))).toEqual({
      readAt: snapshot.readAt,
      id: snapshot.id,
    });
    expect(deviceSnapshotCodec.stampOf(Buffer.from('not a header'))).toBeUndefined();
  });

  const flip = (at: number): Buffer => {
    const copy = Buffer.from(encoded);
    copy[at] = copy[at]! ^ 0xff;
    return copy;
  };

  it.each([
    ['another format version', () => Buffer.concat([Buffer.from('{"v":5,'), encoded.subarray('{"v":6,'.length)])],
    ['a corrupted byte in the payload', () => flip(encoded.length - 40)],
    ['a truncated value', () => encoded.subarray(0, Math.floor(encoded.length / 2))],
    ['text that is not the format', () => Buffer.from('[{"id":"1"}]')],
  ])('reads %s as nothing', async (_label, bytes) => {
    await expect(deviceSnapshotCodec.decode(bytes())).resolves.toBeUndefined();
  });

  it.each([
    [
      'a flag offset outside its device',
      (value: DeviceSnapshot) => ({ ...value, flagAt: value.flagAt.map((at, index) => (index === 3 ? at + 10_000 : at)) }),
    ],
    [
      'device offsets that do not cover the JSON',
      (value: DeviceSnapshot) => ({ ...value, starts: value.starts.map((at, index) => (index === value.count ? at - 1 : at)) }),
    ],
    [
      'a key outside its dictionary',
      (value: DeviceSnapshot) => ({ ...value, osVersionKey: value.osVersionKey.map((key, index) => (index === 0 ? 999 : key)) }),
    ],
    [
      'a response key outside its dictionary',
      (value: DeviceSnapshot) => ({ ...value, responseKey: value.responseKey.map((key, index) => (index === 1 ? 999 : key)) }),
    ],
  ])('refuses a value whose checksum holds but whose structure does not: %s', async (_label, tamper) => {
    await expect(deviceSnapshotCodec.decode(deviceSnapshotCodec.encode(tamper(snapshot)))).rejects.toThrow(/malformed/);
  });
});
