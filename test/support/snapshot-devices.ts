import { buildSnapshot } from '../../lib/devices/build-snapshot.ts';
import { COMPUTER_LAYOUT } from '../../lib/devices/snapshot-layout.ts';
import type { DeviceSnapshot } from '../../lib/devices/device-snapshot.ts';
import type { InventoryDevice } from '../../lib/devices/map-inventory-record.ts';

/**
 * For the tests: the devices `snapshot` was built from, as `buildSnapshot` took them: each device's JSON read back
 * without its undecided flag, and its board id, which is not served, from the columns. Every chunk
 * of a snapshot read from the cluster is decoded. `buildSnapshot` of them gives the same text and id.
 */
export const snapshotDevices = <D extends { id: string } = InventoryDevice>(snapshot: DeviceSnapshot): D[] => {
  const { text, starts, count } = snapshot;
  const devices: D[] = [];
  for (let chunkIndex = 0; chunkIndex * text.chunkDevices < count; chunkIndex += 1) {
    const json = text.chunk(chunkIndex);
    const from = chunkIndex * text.chunkDevices;
    const base = starts[from]!;
    for (let index = from; index < Math.min(count, from + text.chunkDevices); index += 1) {
      const { os_is_latest: _flag, ...device } = JSON.parse(
        json.slice(starts[index]! - base, starts[index + 1]! - base),
      ) as InventoryDevice & { os_is_latest: boolean };
      const board = snapshot.boards[snapshot.boardKey[index]!];
      if (board !== undefined) device.board_id = board;
      devices.push(device as unknown as D);
    }
  }
  return devices;
};

/** A snapshot of computers (the tests' usual fleet), laid out as GET /devices serves them. */
export const buildComputerSnapshot = (devices: readonly InventoryDevice[], readAt: number, fullReadAt = readAt): DeviceSnapshot =>
  buildSnapshot(devices, COMPUTER_LAYOUT, readAt, fullReadAt);
