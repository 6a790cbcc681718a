/**
 * Buffers given back once their user is done with them, to be filled again: a fresh buffer of a
 * megabyte costs page faults as it is first written and garbage-collection work once dropped, where
 * the same few go round. Each buffer has memory of its own (never Buffer's shared pool), so it can
 * also be transferred to another thread.
 */
export class BufferPool {
  private readonly spare: Buffer[] = [];
  private readonly bytes: number;

  /** `bytes`: the size of a new buffer. */
  constructor(bytes: number) {
    this.bytes = bytes;
  }

  /** A spare buffer of at least `atLeast` bytes, else a new one of `bytes` (or `atLeast`, if more). */
  take(atLeast = 0): Buffer {
    const spare = this.spare.pop();
    return spare !== undefined && spare.length >= atLeast ? spare : Buffer.allocUnsafeSlow(Math.max(atLeast, this.bytes));
  }

  /** Gives back the whole memory of `buffer` (maybe a view of its first bytes), which nothing reads or writes any more. */
  give(buffer: Uint8Array | ArrayBuffer): void {
    const memory = buffer instanceof ArrayBuffer ? buffer : buffer.buffer;
    this.spare.push(Buffer.from(memory, 0, memory.byteLength));
  }
}
