import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { BlockQueue } from '../../../../lib/import/take/block-queue.ts';

const BLOCK_BYTES = 64;

/** Appends `piece` through the queue as the spill and rejects writers do. */
const append = (queue: BlockQueue, piece: Buffer): void => {
  const block = queue.room(piece.length);
  queue.used += piece.copy(block, queue.used);
};

const pieces = (count: number): Buffer[] => Array.from({ length: count }, (_, index) => Buffer.from(`${index}:${'x'.repeat(index % 23)}|`));

/**
 * A file-like output: done with a chunk only when it calls back, which it does when the test says
 * (a file stream's write completes later, on the thread pool). Until then it holds the very buffer.
 */
const heldOutput = (): { output: Writable; received: Buffer[]; complete: () => void } => {
  const received: Buffer[] = [];
  const pending: (() => void)[] = [];
  const output = new Writable({
    write: (chunk: Buffer, _encoding, callback) => {
      pending.push(() => {
        received.push(Buffer.from(chunk));
        callback();
      });
    },
  });
  // Completing one write starts the next buffered one at once, so this drains them all.
  const complete = (): void => {
    for (let done = pending.shift(); done !== undefined; done = pending.shift()) done();
  };
  return { output, received, complete };
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

  it('fills a block again only once a file-like output has called back for it, and the bytes stay right', async () => {
    const { output, received, complete } = heldOutput();
    const queue = new BlockQueue(output, { blockBytes: BLOCK_BYTES, reuseWritten: true });
    const written = pieces(300);
    const blocksSeen = new Set<ArrayBufferLike>([queue.room(0).buffer]);
    for (const [index, piece] of written.entries()) {
      append(queue, piece);
      blocksSeen.add(queue.room(0).buffer);
      await queue.flush();
      // The output holds what it was given over several appends, then completes, as between batches.
      if (index % 8 === 7) {
        complete();
        await new Promise(setImmediate);
      }
    }
    await queue.flush(true);
    complete();
    expect(Buffer.concat(received).toString('latin1')).toBe(Buffer.concat(written).toString('latin1'));
    // About seventy blocks' worth of pieces went through the few blocks in flight between completions.
    expect(blocksSeen.size).toBeLessThanOrEqual(8);
  });

  it('writes nothing for an empty queue, and refuses to go on once the output failed', async () => {
    const { output, received } = heldOutput();
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
