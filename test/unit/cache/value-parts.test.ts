import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { joinParts, partKey, readManifest, splitValue, valuePrefix } from '../../../lib/cache/value-parts.ts';

/** Keys' hash slot content as Redis Cluster computes it: the first non-empty `{…}`, else the whole key. */
const slotContent = (key: string): string => {
  const open = key.indexOf('{');
  const close = open < 0 ? -1 : key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
};

describe('values in parts', () => {
  it('stores a value of one part as it is, with no manifest', () => {
    const value = Buffer.from('{"v":3}\npayload');
    const split = splitValue(value, 'g1', 64);
    expect(split).toEqual({ head: value, rest: [], manifest: undefined });
    expect(readManifest(split.head)).toBeUndefined();
    expect(valuePrefix(split.head, 7)?.toString()).toBe('{"v":3}');
  });

  it('splits a larger value into a head and parts that join back to the same bytes, whatever the sizes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 2_000 }), fc.integer({ min: 1, max: 300 }), (bytes, partBytes) => {
        const value = Buffer.from(bytes);
        const split = splitValue(value, 'gen-1', partBytes);
        if (value.length <= partBytes) {
          expect(split.head.equals(value)).toBe(true);
          return;
        }
        const found = readManifest(split.head);
        if (found === undefined || found === 'malformed') throw new Error('no manifest in a head of several parts');
        expect(found.manifest.parts).toBe(Math.ceil(value.length / partBytes));
        expect(split.rest.map((part) => part.index)).toEqual(Array.from({ length: found.manifest.parts - 1 }, (_, offset) => offset + 1));
        expect(
          joinParts(
            split.head,
            found,
            split.rest.map((part) => part.bytes),
          )?.equals(value),
        ).toBe(true);
        // A peek sees the first part alone: it is for a value's header, far shorter than a part.
        expect(valuePrefix(split.head, 5)?.equals(value.subarray(0, Math.min(5, partBytes)))).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('reads back whole or not at all: a missing, short, altered or extra part is no value', () => {
    const value = randomBytes(1_000);
    const split = splitValue(value, 'g2', 300);
    const found = readManifest(split.head);
    if (found === undefined || found === 'malformed') throw new Error('no manifest');
    const parts = split.rest.map((part) => part.bytes);
    expect(joinParts(split.head, found, parts)?.equals(value)).toBe(true);
    expect(joinParts(split.head, found, [parts[0]!, null, parts[2]!])).toBeUndefined();
    expect(joinParts(split.head, found, parts.slice(0, 2))).toBeUndefined();
    expect(joinParts(split.head, found, [...parts, Buffer.from('x')])).toBeUndefined();
    const altered = Buffer.from(parts[1]!);
    altered[0] = altered[0]! ^ 0xff;
    expect(joinParts(split.head, found, [parts[0]!, altered, parts[2]!])).toBeUndefined();
    expect(joinParts(split.head, found, [parts[0]!, parts[1]!.subarray(1), parts[2]!])).toBeUndefined();
  });

  it('names every part in the hash slot of its value, with or without a hash tag in the key', () => {
    for (const key of ['devices:v4:{0123abcd}', 'plain-key', 'a:{tag}:b']) {
      for (const index of [1, 2, 17]) expect(slotContent(partKey(key, 'g', index))).toBe(slotContent(key));
    }
    expect(partKey('k', 'g1', 1)).not.toBe(partKey('k', 'g2', 1));
  });

  it('tells a head that starts like a manifest but does not parse from a value stored whole', () => {
    const split = splitValue(randomBytes(100), 'g3', 10);
    const broken = Buffer.from(split.head);
    broken.write('#', split.head.indexOf('{'));
    expect(readManifest(broken)).toBe('malformed');
    expect(valuePrefix(broken, 4)).toBeUndefined();
    expect(readManifest(Buffer.from('garbage'))).toBeUndefined();
  });
});
