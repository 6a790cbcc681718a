import { once } from 'node:events';
import type { Writable } from 'node:stream';

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
  /** Blocks the output is done with (reuseWritten): fresh ones would each cost page faults and GC work. */
  private readonly spare: Buffer[] | undefined;

  constructor(output: Writable, options: BlockQueueOptions) {
    this.output = output;
    this.blockBytes = options.blockBytes;
    this.spare = options.reuseWritten ? [] : undefined;
    this.block = Buffer.allocUnsafeSlow(options.blockBytes);
  }

  /** Makes room for `bytes` more in `block` (a block of their own size for more than a block) and returns it. */
  room(bytes: number): Buffer {
    if (this.used + bytes > this.block.length) {
      this.retire();
      if (bytes > this.block.length) this.block = Buffer.allocUnsafeSlow(bytes);
    }
    return this.block;
  }

  /** Queues the current block for the output and starts another. */
  private retire(): void {
    if (this.used === 0) return;
    this.filled.push(this.block.subarray(0, this.used));
    this.block = this.spare?.pop() ?? Buffer.allocUnsafeSlow(this.blockBytes);
    this.used = 0;
  }

  /** Writes the filled blocks (and the one being filled, with `all`), waiting while the output is behind. */
  async flush(all = false): Promise<void> {
    if (this.output.errored) throw this.output.errored;
    if (all) this.retire();
    if (this.filled.length === 0) return;
    let drained = true;
    for (const written of this.filled.splice(0)) {
      drained = this.output.write(written, (error) => {
        if (!error && this.spare !== undefined && written.buffer.byteLength === this.blockBytes) {
          this.spare.push(Buffer.from(written.buffer, written.byteOffset, this.blockBytes));
        }
      });
    }
    if (!drained) await once(this.output, 'drain');
  }
}
