import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TextSet } from '../../../../lib/import/take/text-set.ts';

describe('TextSet', () => {
  it('tells new texts from repeated ones: empty, multi-byte, astral, and texts that differ in one byte', () => {
    const set = new TextSet(2);
    const texts = [
      '',
      'ann@x.io',
      'ann@x.iO',
      'ann@x.io ',
      'fatima.müller@example.net',
      'fatima.muller@example.net',
      '😀@x.io',
      '\u0000',
      'a\u0000b',
      'ab',
    ];
    expect(texts.map((text) => set.add(text))).toEqual(texts.map(() => true));
    expect(texts.map((text) => set.add(text))).toEqual(texts.map(() => false));
    expect(set.size).toBe(texts.length);
  });

  it('keeps apart two texts whose hashes are equal (FNV-1a of user449599@x.io and user612382@x.io), by their bytes', () => {
    const fnv1a = (text: string): number => {
      let hash = 0x811c9dc5 | 0;
      for (const byte of Buffer.from(text, 'utf8')) hash = Math.imul(hash ^ byte, 0x01000193);
      return hash;
    };
    expect(fnv1a('user449599@x.io')).toBe(fnv1a('user612382@x.io'));
    const set = new TextSet();
    expect([set.add('user449599@x.io'), set.add('user612382@x.io')]).toEqual([true, true]);
    expect([set.add('user612382@x.io'), set.add('user449599@x.io')]).toEqual([false, false]);
  });

  it('keeps texts that are not well-formed apart, each exactly (a lone surrogate is not its replacement character)', () => {
    const set = new TextSet();
    expect([set.add('a\ud800'), set.add('a\udc00'), set.add('a\ufffd'), set.add('a\ud800')]).toEqual([true, true, true, false]);
    expect(set.size).toBe(3);
  });

  it('keeps texts longer than a chunk, and the texts after them', () => {
    const set = new TextSet();
    const long = `${'x'.repeat(9 << 20)}@x.io`;
    const longer = `${'é'.repeat(5 << 20)}@x.io`; // 10 MiB of UTF-8
    expect([set.add('before@x.io'), set.add(long), set.add('after@x.io'), set.add(longer), set.add('last@x.io')]).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
    expect([set.add(long), set.add(longer), set.add('before@x.io'), set.add('after@x.io'), set.add('last@x.io')]).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
    expect(set.add(`${'x'.repeat(9 << 20)}@x.iO`)).toBe(true);
  });

  it('fills chunk after chunk without losing an entry', () => {
    const set = new TextSet();
    // ~1 KB each, ~20 MB in all: the growing chunks (64 KiB doubling to 8 MiB), then two of 8 MiB.
    const text = (n: number): string => `${n}:${'y'.repeat(1000 + (n % 7))}`;
    for (let n = 0; n < 20_000; n += 1) expect(set.add(text(n))).toBe(true);
    for (let n = 0; n < 20_000; n += 1) expect(set.add(text(n))).toBe(false);
    expect(set.size).toBe(20_000);
  });

  it('agrees with a Set<string> on random texts while growing well past its initial capacity', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.string({ unit: 'grapheme', maxLength: 12 }),
            fc.string({ unit: 'binary', maxLength: 6 }),
            // Lone surrogates among other characters: the texts kept apart from the bytes.
            fc.string({ unit: fc.constantFrom('\ud800', '\udbff', '\udc00', '\ufffd', 'a'), maxLength: 4 }),
            fc.constantFrom('a', 'A', 'é', 'e\u0301'),
          ),
          { maxLength: 2000 },
        ),
        (texts) => {
          const set = new TextSet(2);
          const reference = new Set<string>();
          for (const text of texts) {
            expect(set.add(text)).toBe(!reference.has(text));
            reference.add(text);
          }
          expect(set.size).toBe(reference.size);
        },
      ),
      { numRuns: 100 },
    );
  });
});
