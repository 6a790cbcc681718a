import type { BufferPool } from './buffer-pool.ts';

/**
 * A stream's chunks copied into blocks of one size from `pool`, each full block handed on whole and
 * the last, shorter one (maybe empty) when the stream ends: the gzip stage's 1 MiB blocks, the S3
 * upload's parts. A block is taken from the pool only when bytes arrive for it, so one handed on
 * can go back to the pool before the next is needed.
 */
export class BlockFiller {
  private block: Buffer | undefined;
  private filled = 0;

  private readonly pool: BufferPool;
  private readonly blockBytes: number;

  constructor(pool: BufferPool, blockBytes: number) {
    this.pool = pool;
    this.blockBytes = blockBytes;
  }

  /** Bytes in the block being filled. */
  get length(): number {
    return this.filled;
  }

  /** Copies `chunk` in, awaiting `full(block, length)` for each block it fills; `full` then owns that block. */
  async add(chunk: Buffer, full: (block: Buffer, length: number) => Promise<void> | void): Promise<void> {
    for (let at = 0; at < chunk.length;) {
      this.block ??= this.pool.take(this.blockBytes);
      const copied = chunk.copy(this.block, this.filled, at, Math.min(chunk.length, at + this.blockBytes - this.filled));
      this.filled += copied;
      at += copied;
      if (this.filled < this.blockBytes) continue;
      const block = this.block;
      this.block = undefined;
      this.filled = 0;
      await full(block, this.blockBytes);
    }
  }

  /** The block being filled (a new, empty one when none is) with the bytes it holds, handed on. */
  rest(): { block: Buffer; length: number } {
    const rest = { block: this.block ?? this.pool.take(this.blockBytes), length: this.filled };
    this.block = undefined;
    this.filled = 0;
    return rest;
  }
}
