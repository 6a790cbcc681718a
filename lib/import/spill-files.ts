import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import type { ReadStream, WriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import type { RemappableJson } from './json-writer.ts';

/**
 * Spill files: one line per winning record, in order. JSON text never holds a raw newline or tab
 * (JSON.stringify escapes both), so `\n` ends a record and `\t` separates a remappable record's
 * reference from the JSON around it.
 */
export const remappableLine = (json: RemappableJson): string => `${json.reference}\t${json.prefix}\t${json.suffix}`;

const TAB = 9;
const NEWLINE = 10;

/**
 * Rebuilds the record from its spilled bytes, writing its reference as `remap` says, as pieces
 * pushed onto `parts` (no decode, no re-encode: only the reference is ever read as text).
 */
export const pushRemappable = (line: Buffer, remap: (reference: string) => string, parts: Buffer[]): void => {
  const first = line.indexOf(TAB);
  const second = line.indexOf(TAB, first + 1);
  const reference = line.toString('latin1', 0, first);
  const target = remap(reference);
  parts.push(
    line.subarray(first + 1, second),
    target === reference ? line.subarray(0, first) : Buffer.from(target, 'latin1'),
    line.subarray(second + 1),
  );
};

const FLUSH_CHARS = 32 * 1024;

/** Buffers lines and writes them in large pieces; `flush` waits for the disk when it lags behind. */
export class SpillWriter {
  private readonly stream: WriteStream;
  private buffered: string[] = [];
  private bufferedChars = 0;

  constructor(path: string) {
    this.stream = createWriteStream(path, { flags: 'wx' });
    // Errors surface through `once(…'drain')` / `finished`; this keeps an early one from crashing.
    this.stream.on('error', () => {});
  }

  append(line: string): void {
    this.buffered.push(line);
    this.bufferedChars += line.length + 1;
  }

  /** Writes what is buffered once it is large (or always, when `force`), honouring backpressure. */
  async flush(force = false): Promise<void> {
    if (this.stream.errored) throw this.stream.errored;
    if (this.bufferedChars === 0 || (!force && this.bufferedChars < FLUSH_CHARS)) return;
    const text = `${this.buffered.join('\n')}\n`;
    this.buffered = [];
    this.bufferedChars = 0;
    if (!this.stream.write(text)) await once(this.stream, 'drain');
  }

  async close(): Promise<void> {
    await this.flush(true);
    this.stream.end();
    await finished(this.stream);
  }

  destroy(): void {
    this.stream.destroy();
  }
}

/** Reads a spill file back a few records at a time, as byte slices of what was read. */
export class SpillReader {
  private readonly stream: ReadStream;
  private readonly chunks: AsyncIterator<Buffer>;
  private data: Buffer = Buffer.alloc(0);
  private position = 0;
  private ended = false;

  constructor(path: string) {
    this.stream = createReadStream(path, { highWaterMark: 64 * 1024 });
    this.chunks = this.stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  }

  /** Up to `count` records; fewer only at the end of the file. */
  async read(count: number): Promise<Buffer[]> {
    const taken: Buffer[] = [];
    while (taken.length < count) {
      const end = this.data.indexOf(NEWLINE, this.position);
      if (end !== -1) {
        taken.push(this.data.subarray(this.position, end));
        this.position = end + 1;
        continue;
      }
      if (this.ended) break;
      const chunk = await this.chunks.next();
      const rest = this.data.subarray(this.position);
      if (chunk.done) {
        this.ended = true;
        // Every record ends with a newline; anything after the last one is not a record.
        this.data = rest;
      } else {
        this.data = rest.length === 0 ? chunk.value : Buffer.concat([rest, chunk.value]);
      }
      this.position = 0;
    }
    return taken;
  }

  destroy(): void {
    this.stream.destroy();
  }
}
