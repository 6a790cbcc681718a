import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BlockFiller } from '../../../lib/bytes/block-filler.ts';
import { BufferPool } from '../../../lib/bytes/buffer-pool.ts';

/** Runs `chunks` through a filler of `blockBytes`, returning the blocks handed on (full ones, then the rest). */
const fill = async (chunks: Buffer[], blockBytes: number) => {
  const pool = new BufferPool(blockBytes);
  const filler = new BlockFiller(pool, blockBytes);
  const handed: Buffer[] = [];
  for (const chunk of chunks) {
    await filler.add(chunk, (block, length) => {
      handed.push(Buffer.from(block.subarray(0, length)));
      pool.give(block);
    });
  }
  const rest = filler.rest();
  return { full: handed, rest: Buffer.from(rest.block.subarray(0, rest.length)) };
};

describe('BlockFiller', () => {
  it('hands on every full block whole and the rest at the end, the bytes in order', async () => {
    const { full, rest } = await fill([Buffer.from('abcde'), Buffer.from('fg'), Buffer.from('hijklmn')], 4);
    expect(full.map(String)).toEqual(['abcd', 'efgh', 'ijkl']);
    expect(String(rest)).toBe('mn');
  });

  it('hands on an empty rest when the bytes end on a block boundary, or none came', async () => {
    expect((await fill([Buffer.from('abcdefgh')], 4)).rest.length).toBe(0);
    expect(await fill([], 4)).toEqual({ full: [], rest: Buffer.alloc(0) });
  });

  it('waits for each full block to be taken before copying on', async () => {
    const pool = new BufferPool(2);
    const filler = new BlockFiller(pool, 2);
    const seen: string[] = [];
    let release = (): void => undefined;
    const adding = filler.add(Buffer.from('abcd'), async (block) => {
      seen.push(String(block.subarray(0, 2)));
      await new Promise<void>((resolve) => (release = resolve));
    });
    await Promise.resolve();
    expect(seen).toEqual(['ab']);
    release();
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual(['ab', 'cd']);
    release();
    await adding;
    expect(filler.length).toBe(0);
  });

  it('keeps every byte in order whatever the chunking and block size', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.uint8Array({ maxLength: 40 }), { maxLength: 20 }),
        fc.integer({ min: 1, max: 16 }),
        async (arrays, size) => {
          const chunks = arrays.map((array) => Buffer.from(array));
          const { full, rest } = await fill(chunks, size);
          expect(full.every((block) => block.length === size)).toBe(true);
          expect(rest.length).toBeLessThan(size);
          expect(Buffer.concat([...full, rest])).toEqual(Buffer.concat(chunks));
        },
      ),
    );
  });
});
