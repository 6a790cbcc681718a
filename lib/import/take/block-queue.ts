import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { BufferPool } from '../../bytes/buffer-pool.ts';

interface BlockQueueOptions {
  blockBytes: number;
  /**
   * Fill a block again once `output` has called back for it. Only for an output that is done with a
   * chunk when it calls back, as a file stream is (the bytes are in the kernel): a PassThrough, as
   * in front of an S3 upload, hands the very buffer on to its reader.
   */
  reuseWritten: boolean;
}

/**
 * Bytes gathered into blocks that go to `output` whole: big writes, no per-record syscalls or
 * string joins. The writer fills the block `room` returns in place from `used` and moves `used` on.
 * Filled blocks wait until `flush`, which the caller awaits once per batch, so the output's
 * backpressure holds the reading back and at most one batch's worth is buffered. The spill files
 * and the rejects file both write through one.
 */
export class BlockQueue {
  /** The block being filled (the writer gets it from `room`). */
  private block: Buffer;
  /** How much of `block` is filled. */
  used = 0;
  private readonly output: Writable;
  private readonly blockBytes: number;
  private readonly filled: Buffer[] = [];
  /** New blocks, and (reuseWritten) the blocks the output is done with. */
  private readonly pool: BufferPool;
  private readonly reuseWritten: boolean;

  constructor(output: Writable, options: BlockQueueOptions) {
    this.output = output;
    this.blockBytes = options.blockBytes;
    this.reuseWritten = options.reuseWritten;
    this.pool = new BufferPool(options.blockBytes);
    this.block = this.pool.take();
  }

  /** Makes room for `bytes` more in `block` (a block of their own size for more than a block) and returns it. */
  room(bytes: number): Buffer {
    if (this.used + bytes > this.block.length) this.retire(bytes);
    return this.block;
  }

  /** Queues the current block for the output and starts another, of at least `bytes`. */
  private retire(bytes = 0): void {
    if (this.used > 0) {
      this.filled.push(this.block.subarray(0, this.used));
      this.block = this.pool.take(bytes);
      this.used = 0;
    } else if (bytes > this.block.length) this.block = this.pool.take(bytes);
  }

  /** Writes the filled blocks (and the one being filled, with `all`), waiting while the output is behind. */
  async flush(all = false): Promise<void> {
    if (this.output.errored) throw this.output.errored;
    if (all) this.retire();
    if (this.filled.length === 0) return;
    let drained = true;
    for (const written of this.filled.splice(0)) {
      drained = this.output.write(written, (error) => {
        if (!error && this.reuseWritten && written.buffer.byteLength === this.blockBytes) this.pool.give(written);
      });
    }
    if (!drained) await once(this.output, 'drain');
  }
}
