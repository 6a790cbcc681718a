import { BufferPool } from './buffer-pool.ts';

/** Bytes a string can take in UTF-8: at most 3 per UTF-16 code unit (a surrogate pair: 4 for 2). */
export const maxUtf8Bytes = (text: string): number => 3 * text.length;

/**
 * Bytes written into one buffer that grows as needed, and handed out whole by `take` (no copy): the
 * import's encoders (spill records, verdicts) write into one. Writers make `room` first, then fill
 * `data` from `used` on and move `used` past what they wrote.
 */
export class GrowableBuffer {
  data: Buffer;
  used = 0;
  private readonly pool: BufferPool;

  constructor(initialBytes = 64 * 1024) {
    this.pool = new BufferPool(initialBytes);
    this.data = this.pool.take();
  }

  /** Makes room for `bytes` more after `used`. */
  room(bytes: number): void {
    if (this.used + bytes <= this.data.length) return;
    const grown = Buffer.allocUnsafeSlow(Math.max(this.used + bytes, 2 * this.data.length));
    this.data.copy(grown, 0, 0, this.used);
    this.data = grown;
  }

  /**
   * The bytes so far, in the buffer they were written in (its memory its own, so it can move to
   * another thread); writing goes on in a buffer given back earlier, or a new one.
   */
  take(): Buffer {
    const taken = this.data.subarray(0, this.used);
    this.data = this.pool.take();
    this.used = 0;
    return taken;
  }

  /** Gives back a buffer `take` handed out, once its taker is done with it, to be written into again. */
  giveBack(taken: Uint8Array | ArrayBuffer): void {
    this.pool.give(taken);
  }
}
