import { CHUNK_DEVICES, chunkDigest, snapshotId, type DeviceSnapshot } from './device-snapshot.ts';
import { renderDevice, type SnapshotLayout } from './snapshot-layout.ts';

/** Interns values into a dictionary whose entry 0 stands for "none", keyed in order of first use. */
export const dictionary = <T>(values: (T | undefined)[] = [undefined]) => {
  const keys = new Map<T, number>();
  values.forEach((value, key) => {
    if (key > 0) keys.set(value!, key);
  });
  return {
    values,
    keyOf: (value: T | undefined): number => {
      if (value === undefined) return 0;
      let key = keys.get(value);
      if (key === undefined) {
        key = values.length;
        keys.set(value, key);
        values.push(value);
      }
      return key;
    },
  };
};

/** The snapshot of `devices` (ascending ids, each once: as the inventory client returns them), laid out as `layout` says. */
export const buildSnapshot = <D extends { id: string }>(
  devices: readonly D[],
  layout: SnapshotLayout<D>,
  readAt: number,
  fullReadAt = readAt,
): DeviceSnapshot => {
  const count = devices.length;
  const starts = new Uint32Array(count + 1);
  const flagAt = new Uint32Array(count);
  const osVersionKey = new Uint32Array(count);
  const responseKey = new Uint32Array(count);
  const osNameKey = new Uint32Array(count);
  const modelKey = new Uint32Array(count);
  const boardKey = new Uint32Array(count);
  const managed = new Int8Array(count);
  const supervised = new Int8Array(count);
  const lastContact = new Float64Array(count);
  const versions = dictionary<string>();
  const responses = dictionary<string>();
  const osNames = dictionary<string>();
  const models = dictionary<string>();
  const boards = dictionary<string>();
  const chunks: string[] = [];
  let parts: string[] = [];
  let length = 0;
  devices.forEach((device, index) => {
    const rendered = renderDevice(device, layout);
    starts[index] = length;
    flagAt[index] = length + rendered.flag;
    parts.push(rendered.json);
    length += rendered.json.length;
    if (parts.length === CHUNK_DEVICES) {
      chunks.push(parts.join(''));
      parts = [];
    }
    osVersionKey[index] = versions.keyOf(rendered.osVersion);
    responseKey[index] = responses.keyOf(rendered.response);
    osNameKey[index] = osNames.keyOf(rendered.category);
    modelKey[index] = models.keyOf(rendered.model);
    boardKey[index] = boards.keyOf(rendered.board);
    managed[index] = rendered.managed;
    supervised[index] = rendered.supervised;
    lastContact[index] = rendered.time;
  });
  if (parts.length > 0) chunks.push(parts.join(''));
  starts[count] = length;
  const digests = chunks.map((chunk) => chunkDigest(chunk));
  return {
    count,
    readAt,
    fullReadAt,
    id: snapshotId(digests),
    text: { chunkDevices: CHUNK_DEVICES, digests, chunk: (index) => chunks[index]!, stored: () => undefined },
    starts,
    flagAt,
    ids: devices.map((device) => device.id),
    osVersionKey,
    osVersions: versions.values,
    responseKey,
    responses: responses.values,
    managed,
    supervised,
    osNameKey,
    osNames: osNames.values,
    modelKey,
    models: models.values,
    boardKey,
    boards: boards.values,
    lastContact,
  };
};
