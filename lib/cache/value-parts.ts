import { crc32 } from 'node:zlib';

/**
 * How the cluster tier stores a value larger than one part (docs/architecture.md#values-in-parts):
 * the value's key holds a head, `MAGIC`, a JSON manifest line and the first part; the other parts
 * live under keys named by the key, a generation and their index, in the key's hash slot, so one
 * MGET reads them on a Redis Cluster too. A value of one part is stored as it is.
 */
export const PART_BYTES = 1024 * 1024;

const MAGIC = Buffer.from('\u0000parts:1\n', 'latin1');
/** Longer than any manifest line written here: a peek reads this much more than it was asked for. */
export const MANIFEST_MAX_BYTES = 160;
const NEWLINE = 0x0a;

export interface Manifest {
  /** Names this write's parts, so a reader never mixes two writes. */
  gen: string;
  parts: number;
  bytes: number;
  crc32: number;
}

export interface SplitValue {
  /** What the value's own key holds. */
  head: Buffer;
  /** Parts 1…n−1, each for `partKey(key, gen, index)`; none for a value stored whole. */
  rest: { index: number; bytes: Buffer }[];
  manifest: Manifest | undefined;
}

/** Keys with a hash tag keep it; others become their own tag, which hashes to the key's own slot. */
const slotTag = (key: string): string => {
  const open = key.indexOf('{');
  const close = open < 0 ? -1 : key.indexOf('}', open + 1);
  return close > open + 1 ? key : `{${key}}`;
};

/** A key in `key`'s hash slot: the name of a part, or of anything else that goes with the value. */
export const partKey = (key: string, gen: string, index: number): string => `${slotTag(key)}:part:${gen}:${index}`;

export const splitValue = (bytes: Buffer, gen: string, partBytes = PART_BYTES): SplitValue => {
  if (bytes.length <= partBytes) return { head: bytes, rest: [], manifest: undefined };
  const parts = Math.ceil(bytes.length / partBytes);
  const manifest: Manifest = { gen, parts, bytes: bytes.length, crc32: crc32(bytes) };
  const line = Buffer.from(`${JSON.stringify(manifest)}\n`, 'utf8');
  const rest = Array.from({ length: parts - 1 }, (_, offset) => {
    const index = offset + 1;
    return { index, bytes: bytes.subarray(index * partBytes, (index + 1) * partBytes) };
  });
  return { head: Buffer.concat([MAGIC, line, bytes.subarray(0, partBytes)]), rest, manifest };
};

const count = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

/**
 * The manifest at the start of a head, and where its first part begins; `undefined` for a value
 * stored whole, `'malformed'` for a head that starts like one but does not parse.
 */
export const readManifest = (head: Buffer): { manifest: Manifest; dataAt: number } | undefined | 'malformed' => {
  if (head.length < MAGIC.length || !head.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
  const end = head.subarray(MAGIC.length, MAGIC.length + MANIFEST_MAX_BYTES).indexOf(NEWLINE);
  if (end < 0) return 'malformed';
  let parsed: unknown;
  try {
    parsed = JSON.parse(head.toString('utf8', MAGIC.length, MAGIC.length + end));
  } catch {
    return 'malformed';
  }
  const { gen, parts, bytes, crc32: checksum } = (parsed ?? {}) as Record<string, unknown>;
  if (typeof gen !== 'string' || !/^[\w-]{1,64}$/.test(gen) || !count(parts) || parts < 2 || !count(bytes) || !count(checksum))
    return 'malformed';
  return { manifest: { gen, parts, bytes, crc32: checksum }, dataAt: MAGIC.length + end + 1 };
};

/**
 * The first `length` bytes of the value a head begins (at most its first part: a peek is for a
 * header far shorter than a part), or undefined when the head does not parse.
 */
export const valuePrefix = (head: Buffer, length: number): Buffer | undefined => {
  const found = readManifest(head);
  if (found === 'malformed') return undefined;
  const at = found === undefined ? 0 : found.dataAt;
  return head.subarray(at, at + length);
};

/** The whole value from its head and parts 1…n−1, or undefined unless every part is there and it checks out. */
export const joinParts = (
  head: Buffer,
  found: { manifest: Manifest; dataAt: number },
  rest: readonly (Buffer | null)[],
): Buffer | undefined => {
  const { manifest, dataAt } = found;
  if (rest.length !== manifest.parts - 1 || rest.some((part) => part === null)) return undefined;
  const whole = Buffer.concat([head.subarray(dataAt), ...(rest as Buffer[])]);
  return whole.length === manifest.bytes && crc32(whole) === manifest.crc32 ? whole : undefined;
};
