import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { BlockQueue } from '../../../lib/import/block-queue.ts';

const BLOCK_BYTES = 64;

/** Appends `piece` through the queue as the spill and rejects writers do. */
const append = (queue: BlockQueue, piece: Buffer): void => {
  const block = queue.room(piece.length);
  queue.used += piece.copy(block, queue.used);
};

const pieces = (count: number): Buffer[] =>
  Array.from({ length: count }, (_, index) => Buffer.from(`${index}:${'x'.repeat(index % 23)}|`));

/** A file-like output: done with each chunk when it calls back (it copies the bytes). */
const copyingOutput = (): { output: Writable; received: Buffer[] } => {
  const received: Buffer[] = [];
  const output = new Writable({
    write: (chunk: Buffer, _encoding, callback) => {
      received.push(Buffer.from(chunk));
      callback();
    },
  });
  return { output, received };
};

describe('BlockQueue', () => {
  it('hands a PassThrough every byte in order over many blocks, a piece larger than a block included', async () => {
    const output = new PassThrough({ highWaterMark: 1024 * 1024 });
    const queue = new BlockQueue(output, { blockBytes: BLOCK_BYTES, reuseWritten: false });
    const written = [...pieces(200), Buffer.alloc(5 * BLOCK_BYTES, 'L'), ...pieces(50)];
    for (const [index, piece] of written.entries()) {
      append(queue, piece);
      if (index % 7 === 0) {
        await queue.flush();
        // As between batches, when the output's callbacks have run.
        await new Promise(setImmediate);
      }
    }
    await queue.flush(true);
    output.end();
    // Read only now: the PassThrough still holds every block it was given, none may have been refilled.
    const read: Buffer[] = [];
    for await (const chunk of output) read.push(chunk as Buffer);
    expect(Buffer.concat(read).toString('latin1')).toBe(Buffer.concat(written).toString('latin1'));
  });

  it('fills a block again once a file-like output has called back for it, and the bytes stay right', async () => {
    const { output, received } = copyingOutput();
    const queue = new BlockQueue(output, { blockBytes: BLOCK_BYTES, reuseWritten: true });
    const first = queue.block.buffer;
    const written = pieces(300);
    const blocksSeen = new Set<ArrayBufferLike>([first]);
    for (const piece of written) {
      append(queue, piece);
      blocksSeen.add(queue.block.buffer);
      await queue.flush();
      // As between batches, when the output's callbacks have run.
      await new Promise(setImmediate);
    }
    await queue.flush(true);
    expect(Buffer.concat(received).toString('latin1')).toBe(Buffer.concat(written).toString('latin1'));
    // Hundreds of blocks' worth went through a handful of blocks.
    expect(Buffer.concat(written).length).toBeGreaterThan(50 * BLOCK_BYTES);
    expect(blocksSeen.size).toBeLessThanOrEqual(3);
  });

  it('writes nothing for an empty queue, and refuses to go on once the output failed', async () => {
    const { output, received } = copyingOutput();
    const queue = new BlockQueue(output, { blockBytes: BLOCK_BYTES, reuseWritten: true });
    await queue.flush(true);
    expect(received).toEqual([]);
    // As the writers do: the error surfaces through flush, not as an unhandled event.
    output.on('error', () => {});
    output.destroy(new Error('disk full'));
    append(queue, Buffer.from('row'));
    await expect(queue.flush(true)).rejects.toThrow('disk full');
  });
});
