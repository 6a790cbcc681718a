import { crc32, zstdCompressSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  deviceListTemplateCodec,
  prepareDeviceList,
  renderDeviceListTemplate,
} from '../../../lib/cache/device-list-template.ts';
import { renderDeviceList, type InventoryDevice } from '../../../lib/devices/map-inventory-record.ts';

const DEVICES: InventoryDevice[] = [
  { id: '1', name: 'Mac-1', os_name: 'macOS', os_version: '26.1', os_build: '25B78', supervised: true, managed: true },
  { id: '2', name: 'tab\there "quoted" os_is_latest":true\nnewline', os_version: '15.7.2', username: 'a\\' },
  { id: '10', udid: 'A-B', os_version: '26.0 (25A354)', email: 'jdoe@example.com', last_contact_at: '2026-11-20T10:00:00Z' },
  { id: '11' },
];

const text = fc.string({ unit: 'binary', maxLength: 12 });
const version = fc.oneof(
  fc.constantFrom('26.1', '26.0.1', '15.7.2', '15.10', '15', '26.1-beta', '26.0 (25A354)', 'beta', '', '99999999999999999999.1'),
  text,
);
const device: fc.Arbitrary<InventoryDevice> = fc.record(
  {
    id: fc.bigInt({ min: 0n, max: 10n ** 20n }).map(String),
    udid: text,
    name: text,
    serial_number: text,
    model: text,
    model_identifier: text,
    os_name: text,
    os_version: version,
    os_build: text,
    last_contact_at: text,
    last_inventory_at: text,
    username: text,
    email: text,
    supervised: fc.boolean(),
    managed: fc.boolean(),
  },
  { requiredKeys: ['id'] },
);

describe('device list template', () => {
  it('renders byte for byte what renderDeviceList renders, for any devices and reference', () => {
    fc.assert(
      fc.property(fc.array(device, { maxLength: 12 }), version, (devices, reference) => {
        expect(renderDeviceListTemplate(prepareDeviceList(devices), reference)).toBe(renderDeviceList(devices, reference));
      }),
      { numRuns: 300 },
    );
  });

  it('survives the cluster round trip unchanged for any devices', () => {
    fc.assert(
      fc.property(fc.array(device, { maxLength: 12 }), (devices) => {
        const template = prepareDeviceList(devices);
        const decoded = deviceListTemplateCodec.decode(deviceListTemplateCodec.encode(template));
        expect(decoded).toEqual(template);
        expect(renderDeviceListTemplate(decoded!, '26.1')).toBe(renderDeviceList(devices, '26.1'));
      }),
      { numRuns: 300 },
    );
  });

  it('holds no decision, so two references render different flags from the same cluster value', () => {
    const template = deviceListTemplateCodec.decode(deviceListTemplateCodec.encode(prepareDeviceList(DEVICES)))!;
    expect(template.lines).not.toMatch(/os_is_latest":(true|false)/);
    const flags = (reference: string) =>
      (JSON.parse(renderDeviceListTemplate(template, reference)) as { os_is_latest: boolean }[]).map((item) => item.os_is_latest);
    expect(flags('15.7')).toEqual([true, true, true, false]);
    expect(flags('26.1')).toEqual([true, false, false, false]);
    expect(flags('not a version')).toEqual([false, false, false, false]);
  });

  it('round-trips an empty list', () => {
    const decoded = deviceListTemplateCodec.decode(deviceListTemplateCodec.encode(prepareDeviceList([])));
    expect(decoded).toEqual({ count: 0, lines: '' });
    expect(renderDeviceListTemplate(decoded!, '26.1')).toBe('[]');
  });

  /** A value in the cluster format with any header fields and lines, checksum and length right. */
  const forge = (lines: string, fields: Record<string, unknown> = {}, compress = true): Buffer => {
    const raw = Buffer.from(lines, 'utf8');
    const header = JSON.stringify({ v: 1, n: 1, bytes: raw.length, crc32: crc32(raw), ...fields });
    return Buffer.concat([Buffer.from(`${header}\n`), compress ? zstdCompressSync(raw) : raw]);
  };
  const good = deviceListTemplateCodec.encode(prepareDeviceList(DEVICES));
  const goodLines = prepareDeviceList(DEVICES).lines;
  const flipped = Buffer.from(good);
  flipped[flipped.length - 20] = flipped[flipped.length - 20]! ^ 0xff;

  it('stores the lines compressed, well below their own size', () => {
    expect(good.length).toBeLessThan(Buffer.byteLength(goodLines));
    expect(good.includes(Buffer.from('"os_name"'))).toBe(false);
  });

  it.each([
    ['no bytes', Buffer.alloc(0)],
    ['text that is not the format', Buffer.from('hello world')],
    ['a JSON array (an older, parsed format)', Buffer.from('[{"id":"1"}]')],
    ['a header that is not JSON', Buffer.concat([Buffer.from('{"v":1,'), good.subarray(good.indexOf(0x0a))])],
    ['another format version', forge(goodLines, { v: 2, n: DEVICES.length })],
    ['a negative device count', forge(goodLines, { n: -1 })],
    ['a missing checksum', forge(goodLines, { n: DEVICES.length, crc32: undefined })],
    ['a wrong checksum', forge(goodLines, { n: DEVICES.length, crc32: 12345 })],
    ['a length that does not match the lines', forge(goodLines, { n: DEVICES.length, bytes: Buffer.byteLength(goodLines) + 1 })],
    ['uncompressed lines', forge(goodLines, { n: DEVICES.length }, false)],
    ['an overlong first line', Buffer.concat([Buffer.from(' '.repeat(300)), good])],
    ['a truncated value', good.subarray(0, good.length - 10)],
    ['one changed byte', flipped],
  ])('refuses %s', (_label, value) => {
    expect(deviceListTemplateCodec.decode(value)).toBeUndefined();
  });

  it('renders nothing from lines without the device structure, even when length and checksum match', () => {
    const render = (value: Buffer) => renderDeviceListTemplate(deviceListTemplateCodec.decode(value)!, '26.1');
    expect(render(forge('"26.1"\t{"id":"1","os_is_latest":\t}'))).toBe('[{"id":"1","os_is_latest":true}]');
    for (const [lines, n] of [
      ['"26.1"\t{"id":"1"}\t}', 1],
      ['26.1\t{"id":"1","os_is_latest":\t}', 1],
      ['"26.1\t{"id":"1","os_is_latest":\t}', 1],
      ['"26.1"\t{"id":"1","os_is_latest":\t}\textra}', 1],
      ['"26.1"{"id":"1","os_is_latest":}', 1],
      ['"26.1"\t"id":"1","os_is_latest":\t}', 1],
      ['"26.1"\t{"id":"1","os_is_latest":\t', 1],
      ['"26.1"\t{"id":"1","os_is_latest":\t}', 2],
      ['"26.1"\t{"id":"1","os_is_latest":\t}\n"26.1"\t{"id":"2","os_is_latest":\t}', 1],
      ['"26.1"\t{"id":"1","os_is_latest":\t}', 0],
    ] as const) {
      expect(() => render(forge(lines, { n })), lines).toThrow(/malformed/);
    }
  });
});
