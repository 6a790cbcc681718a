import { jsonStart, recordEnd, referenceLength, referenceStart, sliceJsonBytes, type SpillSlice } from '../formats/spill-record.ts';

/**
 * The archive's batches (docs/import.md): each asset is cut into consecutive slices of 100; entry n holds the n-th
 * slice of each (empty where an asset has none) and there are as many entries as the longest asset
 * needs — none when every asset is empty.
 */
export const BATCH_SIZE = 100;

/** Name of the entry at zero-based `index`: backup_tickets_100.json, backup_tickets_200.json, … */
export const entryName = (index: number): string => `backup_tickets_${(index + 1) * BATCH_SIZE}.json`;

export const entryCount = (assetSizes: readonly number[]): number => Math.ceil(Math.max(0, ...assetSizes) / BATCH_SIZE);

const COMMA = 44;
const ENTRY_HEAD = Buffer.from('{"data":{"tickets":{"data":[');
const AFTER_TICKETS = Buffer.from('],"comments":[');
const AFTER_COMMENTS = Buffer.from('],"users":[');
const ENTRY_TAIL = Buffer.from('],"organizations":[]}}}');
const FIXED_BYTES = ENTRY_HEAD.length + AFTER_TICKETS.length + AFTER_COMMENTS.length + ENTRY_TAIL.length;

/** The id a reference is written with; undefined: unchanged (the common case, no lookup at all). */
export type Remap = ((reference: string) => string) | undefined;

/** Replacement texts for a slice's references, or null where a record stays as spilled. */
const remapsOf = (slice: SpillSlice, remap: Remap): (Buffer | null)[] | undefined => {
  if (remap === undefined) return undefined;
  const { data } = slice;
  const targets: (Buffer | null)[] = [];
  for (let at = slice.start; at < slice.end; at = recordEnd(data, at)) {
    const from = referenceStart(data, at);
    const reference = data.toString('latin1', from, from + referenceLength(data, at));
    const target = remap(reference);
    targets.push(target === reference ? null : Buffer.from(target, 'latin1'));
  }
  return targets;
};

/** Bytes of a slice's records in the entry: their JSON, the remaps' size changes, the commas. */
const slicedBytes = (slice: SpillSlice, targets: readonly (Buffer | null)[] | undefined): number => {
  let bytes = sliceJsonBytes(slice) + Math.max(slice.count - 1, 0);
  if (targets === undefined) return bytes;
  let index = 0;
  for (let at = slice.start; at < slice.end; at = recordEnd(slice.data, at), index += 1) {
    const target = targets[index];
    if (target) bytes += target.length - referenceLength(slice.data, at);
  }
  return bytes;
};

/** Copies a slice's records into `entry` at `offset`, comma separated; returns the new offset. */
const copyRecords = (entry: Buffer, offset: number, slice: SpillSlice, targets: readonly (Buffer | null)[] | undefined): number => {
  const { data } = slice;
  let index = 0;
  for (let at = slice.start; at < slice.end; index += 1) {
    const json = jsonStart(at);
    const next = recordEnd(data, at);
    if (index > 0) entry[offset++] = COMMA;
    const target = targets?.[index];
    if (target) {
      const from = referenceStart(data, at);
      offset += data.copy(entry, offset, json, from);
      offset += target.copy(entry, offset);
      offset += data.copy(entry, offset, from + referenceLength(data, at), next);
    } else {
      offset += data.copy(entry, offset, json, next);
    }
    at = next;
  }
  return offset;
};

/**
 * One archive entry as bytes, spliced from the three spill slices, references rewritten by `remap`
 * (tickets and comments; users carry their final id already). Sized exactly, then filled by copies.
 */
export const entryBytes = (tickets: SpillSlice, comments: SpillSlice, users: SpillSlice, remap: Remap): Buffer => {
  const ticketTargets = remapsOf(tickets, remap);
  const commentTargets = remapsOf(comments, remap);
  const entry = Buffer.allocUnsafe(
    FIXED_BYTES + slicedBytes(tickets, ticketTargets) + slicedBytes(comments, commentTargets) + slicedBytes(users, undefined),
  );
  let offset = ENTRY_HEAD.copy(entry, 0);
  offset = copyRecords(entry, offset, tickets, ticketTargets);
  offset += AFTER_TICKETS.copy(entry, offset);
  offset = copyRecords(entry, offset, comments, commentTargets);
  offset += AFTER_COMMENTS.copy(entry, offset);
  offset = copyRecords(entry, offset, users, undefined);
  ENTRY_TAIL.copy(entry, offset);
  return entry;
};
