import type { Writable } from 'node:stream';
import { BlockQueue } from './block-queue.ts';

/**
 * The rejects file (docs/import.md, "Rejects"), as pgloader keeps one: a CSV of one line per (row,
 * asset) the asset did not take, `row,line,asset,reason,column,value`, UTF-8 without a byte-order
 * mark, LF line ends. A value is quoted (RFC 4180: in double quotes, quotes doubled) only when it
 * holds a comma, a quote, a CR or an LF; the other fields never need it.
 */
const REJECTS_HEADER = 'row,line,asset,reason,column,value\n';

/** The asset words of the rejects file (the summary's `dropped` uses the plural). */
export type RejectedAsset = 'ticket' | 'comment' | 'user';

/** One line of the rejects file: a (row, asset) that the asset did not take, and why. */
export interface Reject {
  /** The data row (from 1) and the line of the file it starts on. */
  row: number;
  line: number;
  asset: RejectedAsset;
  reason: string;
  /** The column at fault; empty for a duplicate. */
  column: string;
  /** The value, `data[start, end)`: the cell as the row gave it (UTF-8), or the duplicate's key. */
  data: Buffer;
  start: number;
  end: number;
}

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
 * Formats reject lines into blocks (block-queue.ts) written whole to `output`, a file or an S3
 * upload that the job commits or aborts with the archive. `flush` is awaited once per batch, so a
 * slow destination holds the reading back: memory stays bounded however many rows are rejected.
 */
export class RejectsWriter {
  private readonly output: Writable;
  private readonly queue: BlockQueue;

  constructor(output: Writable) {
    this.output = output;
    // An S3 upload's PassThrough keeps the written blocks themselves: no block is filled twice.
    this.queue = new BlockQueue(output, { blockBytes: BLOCK_BYTES, reuseWritten: false });
    const block = this.queue.room(REJECTS_HEADER.length);
    this.queue.used += block.write(REJECTS_HEADER, this.queue.used, 'latin1');
  }

  /** One line. */
  add(reject: Reject): void {
    const { data, start, end } = reject;
    const head = `${reject.row},${reject.line},${reject.asset},${reject.reason},${reject.column},`;
    const quoted = needsQuotes(data, start, end);
    // Room for the worst case: every byte a doubled quote.
    const block = this.queue.room(head.length + 2 * (end - start) + 3);
    let used = this.queue.used + block.write(head, this.queue.used, 'latin1');
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
    this.queue.used = used;
  }

  /** Writes the filled blocks, waiting while the destination is behind. */
  flush(): Promise<void> {
    return this.queue.flush();
  }

  /** Writes the rest and ends `output`; resolves once it has taken everything. */
  async finish(): Promise<void> {
    await this.queue.flush(true);
    await new Promise<void>((resolve, reject) => this.output.end((error?: Error | null) => (error ? reject(error) : resolve())));
  }
}
