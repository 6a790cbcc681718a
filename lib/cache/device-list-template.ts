import { constants, crc32, zstdCompressSync, zstdDecompressSync } from 'node:zlib';
import { withLatestFlag, type InventoryDevice } from '../devices/map-inventory-record.ts';
import { isLatest, parseVersion } from '../devices/version.ts';
import type { ClusterCodec } from './tiered-cache.ts';

/**
 * The device list rendered once with each device's latest-OS flag left open: what the cluster tier
 * holds. It does not depend on LATEST_OS_VERSION (containers with another reference share it and
 * never see stale flags), yet turning it into a response body is one pass of string splicing, not a
 * JSON parse and re-render of megabytes: that keeps a cluster hit cheap for large fleets.
 *
 * `lines` holds one line per device, `<os_version as a JSON literal, or empty>\t<head>\t<tail>`,
 * where head is the device's JSON up to `"os_is_latest":` and tail the rest after the flag. JSON
 * text never holds a raw tab or newline, so both are safe separators.
 */
export interface DeviceListTemplate {
  readonly count: number;
  readonly lines: string;
}

const FLAG_KEY = '"os_is_latest":';
const FLAG_SLOT = `${FLAG_KEY}false`;
/** Never parses as a version, so every device renders `false` and the slot is found the same way. */
const NO_REFERENCE = '';

const templateLine = (device: InventoryDevice): string => {
  // Exactly what renderDeviceList writes for the device. JSON.stringify escapes every quote inside
  // strings, so `"os_is_latest":` occurs only as the key itself.
  const json = JSON.stringify(withLatestFlag(device, NO_REFERENCE));
  const at = json.indexOf(FLAG_SLOT);
  if (at < 0) throw new Error(`device ${device.id} rendered without ${FLAG_KEY}`);
  const version = device.os_version === undefined ? '' : JSON.stringify(device.os_version);
  return `${version}\t${json.slice(0, at + FLAG_KEY.length)}\t${json.slice(at + FLAG_SLOT.length)}`;
};

export const prepareDeviceList = (devices: readonly InventoryDevice[]): DeviceListTemplate => ({
  count: devices.length,
  lines: devices.map(templateLine).join('\n'),
});

const malformed = (detail: string): Error => new Error(`device list template is malformed: ${detail}`);

const TAB = '\t';
const CLOSE_BRACE = 125;
const QUOTE = 34;

/**
 * The GET /devices body for one reference: byte for byte what renderDeviceList gives. Checks each
 * line's structure as it goes and throws on a malformed one (a cluster value read back reads as a
 * miss then).
 */
export const renderDeviceListTemplate = (template: DeviceListTemplate, reference: string): string => {
  const { lines, count } = template;
  if (count === 0) {
    if (lines !== '') throw malformed('an empty list with lines');
    return '[]';
  }
  const parsedReference = parseVersion(reference) ?? reference;
  // Fleets share a handful of versions: decide each distinct one once.
  const decided = new Map<string, boolean>();
  let body = '[';
  let start = 0;
  let seen = 0;
  while (seen <= count) {
    const newline = lines.indexOf('\n', start);
    const end = newline < 0 ? lines.length : newline;
    const first = lines.indexOf(TAB, start);
    const second = first < 0 ? -1 : lines.indexOf(TAB, first + 1);
    const third = second < 0 ? -1 : lines.indexOf(TAB, second + 1);
    if (first < 0 || second < 0 || second >= end || (third >= 0 && third < end)) throw malformed(`line ${seen + 1} has no three parts`);
    if (!lines.startsWith('{"', first + 1) || second - FLAG_KEY.length <= first + 1 || !lines.startsWith(FLAG_KEY, second - FLAG_KEY.length)) {
      throw malformed(`line ${seen + 1} has no device head`);
    }
    if (end - 1 <= second || lines.charCodeAt(end - 1) !== CLOSE_BRACE) throw malformed(`line ${seen + 1} has no device tail`);
    const version = lines.slice(start, first);
    let latest = decided.get(version);
    if (latest === undefined) {
      if (version !== '' && (version.length < 2 || version.charCodeAt(0) !== QUOTE || version.charCodeAt(version.length - 1) !== QUOTE)) {
        throw malformed(`line ${seen + 1} has no version literal`);
      }
      latest = version !== '' && isLatest(JSON.parse(version) as string, parsedReference);
      decided.set(version, latest);
    }
    if (seen > 0) body += ',';
    body += lines.slice(first + 1, second) + (latest ? 'true' : 'false') + lines.slice(second + 1, end);
    seen += 1;
    if (newline < 0) break;
    start = newline + 1;
  }
  if (seen !== count) throw malformed(`${seen} lines for ${count} devices`);
  return body + ']';
};

const FORMAT_VERSION = 1;
/**
 * The lines repeat the same keys, models and versions, so even zstd's fastest level shrinks them
 * about 6× (4.3 MB → 0.7 MB for 10,000 devices): less to move over the network on every cluster
 * hit, for a few milliseconds of decompression.
 */
const ZSTD_LEVEL = 1;
/** Longer than any header this code writes: a first line beyond it is not ours. */
const MAX_HEADER_BYTES = 256;
const NEWLINE = 0x0a;

interface Header {
  n: number;
  bytes: number;
  crc32: number;
}

const headerOf = (line: string): Header | undefined => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { v, n, bytes, crc32: checksum } = parsed as Record<string, unknown>;
  const count = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;
  if (v !== FORMAT_VERSION || !count(n) || !count(bytes) || !count(checksum)) return undefined;
  return { n, bytes, crc32: checksum };
};

/**
 * The cluster value: a JSON header line `{"v":1,"n":<devices>,"bytes":<lines' UTF-8 length>,
 * "crc32":<of the lines>}`, then the template's lines compressed with zstd. Another format version
 * reads as a miss; the length and checksum reject truncated or corrupted values without parsing the
 * list (and bound the decompression); rendering checks every line's structure.
 */
export const deviceListTemplateCodec: ClusterCodec<DeviceListTemplate> = {
  encode: (template) => {
    const lines = Buffer.from(template.lines, 'utf8');
    const header = JSON.stringify({ v: FORMAT_VERSION, n: template.count, bytes: lines.length, crc32: crc32(lines) });
    const compressed = zstdCompressSync(lines, { params: { [constants.ZSTD_c_compressionLevel]: ZSTD_LEVEL } });
    return Buffer.concat([Buffer.from(`${header}\n`, 'utf8'), compressed]);
  },
  decode: (value) => {
    const newline = value.subarray(0, MAX_HEADER_BYTES + 1).indexOf(NEWLINE);
    if (newline < 0) return undefined;
    const header = headerOf(value.toString('utf8', 0, newline));
    if (header === undefined) return undefined;
    let lines: Buffer;
    try {
      lines = zstdDecompressSync(value.subarray(newline + 1), { maxOutputLength: Math.max(header.bytes, 1) });
    } catch {
      return undefined;
    }
    if (lines.length !== header.bytes || crc32(lines) !== header.crc32) return undefined;
    return { count: header.n, lines: lines.toString('utf8') };
  },
};
