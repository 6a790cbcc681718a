import fc from 'fast-check';
import { buildComputerSnapshot } from '../../support/snapshot-devices.ts';
import { describe, expect, it } from 'vitest';
import { generateJamfComputers } from '../../../demo/fake-jamf.ts';
import {} from '../../../lib/devices/build-snapshot.ts';
import { deviceSnapshotCodec } from '../../../lib/devices/device-snapshot-codec.ts';
import type { InventoryDevice } from '../../../lib/devices/map-inventory-record.ts';
import { mergeBase, mergeSnapshot, planMerge } from '../../../lib/devices/merge-snapshot.ts';
import { COMPUTER_LAYOUT } from '../../../lib/devices/snapshot-layout.ts';
import { mapComputer } from '../../support/inventory-records.ts';

/** A fleet spanning several chunks of 1,000, with gaps between its ids (new ids can land below the highest). */
const BASE = generateJamfComputers(3_400, 29)
  .map((record) => mapComputer(record)!)
  .map((device, index) => ({ ...device, id: String(10 + index * 3) }));

const text = fc.oneof(fc.string({ maxLength: 10 }), fc.constantFrom('macOS', 'é"\\\u2028🎉', '26.6.2', 'Mac16,1'));
/** What a changed record may become: any field new, dropped, or a value no device had before. */
const edit = fc.record(
  {
    name: text,
    os_name: text,
    os_version: fc.constantFrom('26.6.2', '15.7.2', 'x', '27.0'),
    os_rapid_security_response: fc.constantFrom('(a)', '(c)'),
    model_identifier: text,
    last_contact_at: fc.constantFrom('2026-11-01T10:00:00Z', 'garbage'),
    board_id: fc.constantFrom('J413AP', 'J999AP'),
    managed: fc.boolean(),
    supervised: fc.boolean(),
  },
  { requiredKeys: [] },
);

const changes = fc.record({
  size: fc.integer({ min: 0, max: BASE.length }),
  /** Positions (in the kept fleet) of the devices that change, and what each becomes. */
  updates: fc.array(fc.tuple(fc.nat(), edit), { maxLength: 60 }),
  /** New ids above the highest, by how far each is above the last. */
  appended: fc.array(fc.tuple(fc.integer({ min: 1, max: 5 }), edit), { maxLength: 1_200 }),
  /** New ids below the highest (between two ids 3 apart): every chunk after the first moves. */
  inserted: fc.array(fc.tuple(fc.nat(), edit), { maxLength: 3 }),
});

/** The merged list as a full read would give it, written without the code under test. */
const mergedList = (kept: readonly InventoryDevice[], changed: readonly InventoryDevice[]): InventoryDevice[] => {
  const byId = new Map(kept.map((device) => [device.id, device]));
  for (const device of changed) byId.set(device.id, device);
  return [...byId.values()].sort((a, b) => Number(a.id) - Number(b.id));
};

describe('merging changes into a stored snapshot chunk by chunk', () => {
  it('gives, for any fleet and changes (updates, new ids at the end or below the highest), the snapshot built from scratch, byte for byte', async () => {
    await fc.assert(
      fc.asyncProperty(changes, async ({ size, updates, appended, inserted }) => {
        const kept = BASE.slice(0, size);
        const previous = buildComputerSnapshot(kept, 1_000, 500);
        const stored = (await deviceSnapshotCodec.decode(deviceSnapshotCodec.encode(previous)))!;
        const changedById = new Map<string, InventoryDevice>();
        if (kept.length > 0) {
          for (const [at, fields] of updates) {
            const device = kept[at % kept.length]!;
            changedById.set(device.id, { ...device, ...fields });
          }
          for (const [at, fields] of inserted) changedById.set(String(Number(kept[at % kept.length]!.id) + 1), { id: '', ...fields });
        }
        let last = kept.length === 0 ? 0 : Number(kept.at(-1)!.id);
        for (const [gap, fields] of appended) {
          last += gap;
          changedById.set(String(last), { id: '', ...fields });
        }
        const changed = [...changedById].map(([id, device]) => ({ ...device, id })).sort((a, b) => Number(a.id) - Number(b.id));

        const plan = planMerge(stored.ids, changed);
        const merged = await mergeSnapshot(mergeBase(stored), plan, changed, 2_000, 500, COMPUTER_LAYOUT);
        const expected = buildComputerSnapshot(mergedList(kept, changed), 2_000, 500);
        expect(plan.count).toBe(expected.count);
        expect(merged.id).toBe(expected.id);
        expect((await deviceSnapshotCodec.encodeConcurrently(merged)).equals(deviceSnapshotCodec.encode(expected))).toBe(true);
      }),
      { numRuns: 40 },
    );
  }, 120_000);

  it('keeps an unchanged chunk as it was stored: its compressed bytes are the very ones read', async () => {
    const previous = (await deviceSnapshotCodec.decode(deviceSnapshotCodec.encode(buildComputerSnapshot(BASE, 1_000))))!;
    const changed = [{ ...BASE[1_500]!, name: 'renamed' }];
    const merged = await mergeSnapshot(mergeBase(previous), planMerge(previous.ids, changed), changed, 2_000, 1_000, COMPUTER_LAYOUT);
    expect(merged.text.stored(0)).toBe(previous.text.stored(0));
    expect(merged.text.stored(2)).toBe(previous.text.stored(2));
    expect(merged.text.stored(1)).not.toBe(previous.text.stored(1));
    expect(merged.text.digests[3]).toBe(previous.text.digests[3]);
  });

  it('merges into a snapshot never stored (its chunks as text) as into one read from the cluster', async () => {
    const built = buildComputerSnapshot(BASE, 1_000);
    const changed = [
      { ...BASE[10]!, name: 'renamed' },
      { ...BASE[0]!, id: String(Number(BASE.at(-1)!.id) + 7) },
    ];
    const merged = await mergeSnapshot(mergeBase(built), planMerge(built.ids, changed), changed, 2_000, 1_000, COMPUTER_LAYOUT);
    const expected = buildComputerSnapshot([...BASE.with(10, changed[0]!), changed[1]!], 2_000, 1_000);
    expect(deviceSnapshotCodec.encode(merged).equals(deviceSnapshotCodec.encode(expected))).toBe(true);
  });

  it('refuses changes out of ascending id order', () => {
    expect(() => planMerge(['1', '5', '9'], [{ id: '9' }, { id: '5' }])).toThrow(/ascending/);
  });
});
