/**
 * The JSON line that starts a snapshot's cluster value: the format version, the stamp, and the
 * compressed index's size and checksum (docs/architecture.md#the-snapshots-cluster-format).
 */
/** Changed together with the version in the cluster key (device-inventory.ts). */
export const FORMAT_VERSION = 6;
/** Longer than any header written here: the cluster tier reads this much to learn a value's stamp. */
export const STAMP_BYTES = 512;
const NEWLINE = 0x0a;

export interface SnapshotHeader {
  n: number;
  readAt: number;
  fullReadAt: number;
  id: string;
  /** The compressed index's bytes, its bytes raw, and the raw index's CRC-32. */
  index: number;
  indexRaw: number;
  crc32: number;
}

const count = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

export const headerLine = (header: SnapshotHeader): Buffer => Buffer.from(`${JSON.stringify({ v: FORMAT_VERSION, ...header })}\n`, 'utf8');

/** The header at the start of `bytes` and where the index begins; undefined for another format or no header. */
export const headerOf = (bytes: Buffer): { header: SnapshotHeader; end: number } | undefined => {
  const newline = bytes.subarray(0, STAMP_BYTES).indexOf(NEWLINE);
  if (newline < 0) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString('utf8', 0, newline));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { v, n, readAt, fullReadAt, id, index, indexRaw, crc32: checksum } = parsed as Record<string, unknown>;
  if (
    v !== FORMAT_VERSION ||
    !count(n) ||
    !count(readAt) ||
    !count(fullReadAt) ||
    typeof id !== 'string' ||
    !count(index) ||
    !count(indexRaw) ||
    !count(checksum)
  )
    return undefined;
  return { header: { n, readAt, fullReadAt, id, index, indexRaw, crc32: checksum }, end: newline + 1 };
};
