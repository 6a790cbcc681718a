import { once } from 'node:events';
import type { Writable } from 'node:stream';

/**
 * The rejects file (docs/import.md, "Rejects"), as pgloader keeps one: a CSV of one line per (row,
 * asset) the asset did not take, `row,line,asset,reason,column,value`, UTF-8 without a byte-order
 * mark, LF line ends. A value is quoted (RFC 4180: in double quotes, quotes doubled) only when it
 * holds a comma, a quote, a CR or an LF; the other fields never need it.
 */
export const REJECTS_HEADER = 'row,line,asset,reason,column,value\n';

/** The asset words of the rejects file (the summary's `dropped` uses the plural). */
export type RejectedAsset = 'ticket' | 'comment' | 'user';

const BLOCK_BYTES = 256 * 1024;
const QUOTE = 0x22;
const needsQuotes = (data: Buffer, start: number, end: number): boolean => {
  for (let at = start; at < end; at += 1) {
    const byte = data[at]!;
    if (byte === 0x2c || byte === QUOTE || byte === 0x0a || byte === 0x0d) return true;
  }
  return false;
};

/**
 * Formats reject lines into blocks written whole to `output`, a file or an S3 upload that the job
 * commits or aborts with the archive. `flush` is awaited once per batch, so a slow destination holds
 * the reading back: memory stays bounded however many rows are rejected.
 */
export class RejectsWriter {
  private readonly output: Writable;
  private block = Buffer.allocUnsafeSlow(BLOCK_BYTES);
  private used = 0;
  private readonly filled: Buffer[] = [];

  constructor(output: Writable) {
    this.output = output;
    this.used = this.block.write(REJECTS_HEADER, 0, 'latin1');
  }

  /** One line; the value is `data[start, end)`, UTF-8 as the row gave it. */
  add(row: number, line: number, asset: RejectedAsset, reason: string, column: string, data: Buffer, start: number, end: number): void {
    const head = `${row},${line},${asset},${reason},${column},`;
    const quoted = needsQuotes(data, start, end);
    // Room for the worst case: every byte a doubled quote.
    this.room(head.length + 2 * (end - start) + 3);
    const block = this.block;
    let used = this.used + block.write(head, this.used, 'latin1');
    if (quoted) {
      block[used++] = QUOTE;
      for (let at = start; at < end; at += 1) {
        const byte = data[at]!;
        if (byte === QUOTE) block[used++] = QUOTE;
        block[used++] = byte;
      }
      block[used++] = QUOTE;
    } else {
      used += data.copy(block, used, start, end);
    }
    block[used++] = 0x0a;
    this.used = used;
  }

  /** Writes the filled blocks, waiting while the destination is behind. */
  async flush(): Promise<void> {
    if (this.output.errored) throw this.output.errored;
    if (this.filled.length === 0) return;
    let drained = true;
    for (const block of this.filled.splice(0)) drained = this.output.write(block);
    if (!drained) await once(this.output, 'drain');
  }

  /** Writes the rest and ends `output`; resolves once it has taken everything. */
  async finish(): Promise<void> {
    this.retire();
    await this.flush();
    await new Promise<void>((resolve, reject) => this.output.end((error?: Error | null) => (error ? reject(error) : resolve())));
  }

  private room(bytes: number): void {
    if (this.used + bytes <= this.block.length) return;
    this.retire();
    if (bytes > BLOCK_BYTES) this.block = Buffer.allocUnsafeSlow(bytes);
  }

  private retire(): void {
    if (this.used > 0) this.filled.push(this.block.subarray(0, this.used));
    this.block = Buffer.allocUnsafeSlow(BLOCK_BYTES);
    this.used = 0;
  }
}
