import { createWriteStream, type WriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import { BlockQueue } from './block-queue.ts';

/** Blocks are written to disk whole (block-queue.ts). */
const BLOCK_BYTES = 512 * 1024;

/** Collects spill records (formats/spill-record.ts) into 512 KiB blocks for the spill file. */
export class SpillWriter {
  private readonly stream: WriteStream;
  private readonly queue: BlockQueue;
  private appended = 0;

  constructor(path: string) {
    // Room for a couple of blocks in flight, so the CSV parsing goes on while the disk writes one.
    this.stream = createWriteStream(path, { flags: 'wx', highWaterMark: 2 * BLOCK_BYTES });
    // Errors surface through `flush` / `finished`; this keeps an early one from crashing.
    this.stream.on('error', () => {});
    // A file stream has the bytes in the kernel when it calls back: its blocks are filled again.
    this.queue = new BlockQueue(this.stream, { blockBytes: BLOCK_BYTES, reuseWritten: true });
  }

  /** Appends whole records, `data[start, end)` as a RecordBuffer encoded them. */
  append(data: Buffer, start: number, end: number): void {
    const queue = this.queue;
    const block = queue.room(end - start); // may start a new block: read `used` after it
    queue.used += data.copy(block, queue.used, start, end);
    this.appended += end - start;
  }

  /** Bytes appended so far: what the file holds once flushed. */
  get bytes(): number {
    return this.appended;
  }

  /** Writes what is ready, honouring backpressure: awaited once per batch. */
  flush(): Promise<void> {
    return this.queue.flush();
  }

  async close(): Promise<void> {
    await this.queue.flush(true);
    this.stream.end();
    await finished(this.stream);
  }

  destroy(): void {
    this.stream.destroy();
  }
}
