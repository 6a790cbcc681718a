import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import type { ReadStream, WriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import { StringDecoder } from 'node:string_decoder';
import type { RemappableJson } from './json-writer.ts';

/**
 * Spill files: one line per winning record, in order. JSON text never holds a raw newline or tab
 * (JSON.stringify escapes both), so `\n` ends a record and `\t` separates a remappable record's
 * reference from the JSON around it.
 */
export const remappableLine = (json: RemappableJson): string => `${json.reference}\t${json.prefix}\t${json.suffix}`;

/** Rebuilds the record, writing its reference as `remap` says. */
export const renderRemappable = (line: string, remap: (reference: string) => string): string => {
  const first = line.indexOf('\t');
  const second = line.indexOf('\t', first + 1);
  return line.slice(first + 1, second) + remap(line.slice(0, first)) + line.slice(second + 1);
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

/** Reads a spill file back a few records at a time. */
export class SpillReader {
  private readonly stream: ReadStream;
  private readonly chunks: AsyncIterator<Buffer>;
  private readonly decoder = new StringDecoder('utf8');
  private lines: string[] = [];
  private next = 0;
  private partial = '';
  private ended = false;

  constructor(path: string) {
    this.stream = createReadStream(path, { highWaterMark: 32 * 1024 });
    this.chunks = this.stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  }

  /** Up to `count` records; fewer only at the end of the file. */
  async read(count: number): Promise<string[]> {
    const taken: string[] = [];
    while (taken.length < count) {
      if (this.next < this.lines.length) {
        const end = Math.min(this.lines.length, this.next + count - taken.length);
        for (let index = this.next; index < end; index += 1) taken.push(this.lines[index]!);
        this.next = end;
        continue;
      }
      if (this.ended) break;
      const chunk = await this.chunks.next();
      const text = chunk.done ? this.partial + this.decoder.end() : this.partial + this.decoder.write(chunk.value);
      this.ended = chunk.done === true;
      const lines = text.split('\n');
      this.partial = lines.pop() ?? '';
      this.lines = lines;
      this.next = 0;
    }
    return taken;
  }

  destroy(): void {
    this.stream.destroy();
  }
}
