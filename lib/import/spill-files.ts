import { closeSync, createWriteStream, openSync, readSync } from 'node:fs';
import type { WriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import { BlockQueue } from './block-queue.ts';

/**
 * Spill files hold each winning record as its final JSON bytes, ready to be spliced into an entry,
 * behind a small binary header: `u32 LE byte length | u8 reference offset | u8 reference length`.
 * The reference (a ticket's requester_id, a comment's author_id: ASCII digits) is located, not cut
 * out, so pass 2 copies a record in one piece unless its reference is actually remapped, and never
 * decodes, parses or re-encodes anything. Records without a reference (users) have length 0 there.
 * A byte each is enough: the reference starts within a record's first 72 bytes and has ≤ 20 digits.
 */
const RECORD_HEADER_BYTES = 6;

/** Bytes a string can take in UTF-8: at most 3 per UTF-16 code unit (a surrogate pair: 4 for 2). */
export const maxUtf8Bytes = (text: string): number => 3 * text.length;

/**
 * Encodes records in the spill layout into one growable buffer: the read side builds a batch's
 * records here (json-writer.ts), piece by piece with no intermediate strings, and the take side
 * copies the winners into their spill file as they are (SpillWriter.append).
 */
export class RecordBuffer {
  private data: Buffer;
  private used = 0;
  private recordStart = 0;
  private readonly initialBytes: number;

  constructor(initialBytes = 64 * 1024) {
    this.initialBytes = initialBytes;
    this.data = Buffer.allocUnsafeSlow(initialBytes);
  }

  /** Bytes held so far. */
  get length(): number {
    return this.used;
  }

  /** Starts a record whose JSON takes at most `maxBytes` (see maxUtf8Bytes). */
  begin(maxBytes: number): void {
    const needed = this.used + RECORD_HEADER_BYTES + maxBytes;
    if (needed > this.data.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(needed, 2 * this.data.length));
      this.data.copy(grown, 0, 0, this.used);
      this.data = grown;
    }
    this.recordStart = this.used;
    this.data.writeUInt16LE(0, this.used + 4);
    this.used += RECORD_HEADER_BYTES;
  }

  /**
   * Appends text known to be ASCII (ids, timestamps). A loop in JS: these strings are short, and a
   * native Buffer#write call per piece costs more than copying their few characters.
   */
  ascii(text: string): void {
    const data = this.data;
    let used = this.used;
    for (let index = 0; index < text.length; index += 1) data[used++] = text.charCodeAt(index);
    this.used = used;
  }

  /** Appends pre-encoded bytes (JSON punctuation and keys). */
  bytes(piece: Uint8Array): void {
    const data = this.data;
    let used = this.used;
    for (let index = 0; index < piece.length; index += 1) data[used++] = piece[index]!;
    this.used = used;
  }

  /** Appends any text as UTF-8. */
  utf8(text: string): void {
    this.used += this.data.write(text, this.used, 'utf8');
  }

  /** Appends the record's remappable reference (ASCII digits). */
  reference(text: string): void {
    this.data[this.recordStart + 4] = this.used - this.recordStart - RECORD_HEADER_BYTES;
    this.data[this.recordStart + 5] = text.length;
    this.ascii(text);
  }

  end(): void {
    this.data.writeUInt32LE(this.used - this.recordStart - RECORD_HEADER_BYTES, this.recordStart);
  }

  /**
   * The records so far, in the buffer they were encoded in (its memory its own, so it can move to
   * another thread); encoding goes on in `next`, a buffer an earlier take handed out and its taker
   * gave back, or a new one. Handing the buffer over instead of copying it out spares a copy, and
   * reusing returned buffers spares the page faults and garbage collection of fresh ones.
   */
  take(next?: Buffer): Buffer {
    const taken = this.data.subarray(0, this.used);
    this.data = next ?? Buffer.allocUnsafeSlow(this.initialBytes);
    this.used = 0;
    return taken;
  }
}

/** Blocks are written to disk whole (block-queue.ts). */
const BLOCK_BYTES = 512 * 1024;

/** Collects spill records (encoded by a RecordBuffer) into 512 KiB blocks for the spill file. */
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

/** Records `[start, end)` of `data`, `count` of them, valid until the reader's next `load`. */
export interface SpillSlice {
  data: Buffer;
  start: number;
  end: number;
  count: number;
}

// Reading a record back. `at` is where a record (its header) starts: a slice's records run from
// `slice.start`, each next one starting at the previous one's `recordEnd`, until `slice.end`.

/** Where the record's JSON starts. */
export const jsonStart = (at: number): number => at + RECORD_HEADER_BYTES;
/** Where the record's JSON ends: also where the next record starts. */
export const recordEnd = (data: Buffer, at: number): number => at + RECORD_HEADER_BYTES + data.readUInt32LE(at);
/** Where the record's reference starts (meaningful only when its length is above 0). */
export const referenceStart = (data: Buffer, at: number): number => at + RECORD_HEADER_BYTES + data[at + 4]!;
/** The reference's length in bytes; 0 for a record without one. */
export const referenceLength = (data: Buffer, at: number): number => data[at + 5]!;
/** The bytes of the slice's JSON texts, headers left out. */
export const sliceJsonBytes = (slice: SpillSlice): number => slice.end - slice.start - slice.count * RECORD_HEADER_BYTES;

const READ_BYTES = 512 * 1024;

/**
 * Reads a spill file back a batch of whole records at a time, into one reused buffer. Reads are
 * synchronous on purpose: the file is a local temp file written moments ago (page cache), so a read
 * costs a memory copy, while an asynchronous one would add an event-loop round trip per read.
 */
export class SpillReader {
  private readonly fd: number;
  private data: Buffer = Buffer.allocUnsafeSlow(READ_BYTES);
  private position = 0; // first record not yet handed out
  private filledTo = 0; // end of the bytes read so far
  private atEnd = false;

  constructor(path: string) {
    this.fd = openSync(path, 'r');
  }

  /** The next `count` records (fewer only at the end of the file) as one slice of `data`. */
  load(count: number): SpillSlice {
    let length = 0; // bytes of the records taken so far, from `position`
    let taken = 0;
    while (taken < count) {
      const at = this.position + length;
      const available = this.filledTo - at;
      const needed = available < RECORD_HEADER_BYTES ? RECORD_HEADER_BYTES : RECORD_HEADER_BYTES + this.data.readUInt32LE(at);
      if (available >= needed) {
        length += needed;
        taken += 1;
      } else if (this.atEnd) {
        break; // every record is written whole: a partial tail is not a record
      } else {
        this.readMore(length + needed);
      }
    }
    const slice = { data: this.data, start: this.position, end: this.position + length, count: taken };
    this.position += length;
    return slice;
  }

  /**
   * Reads more of the file after what is buffered, first making room for `keep` bytes from
   * `position`: the unread rest moves to the front, or into a bigger buffer for a huge record.
   */
  private readMore(keep: number): void {
    if (this.position + keep > this.data.length || this.data.length - this.filledTo < READ_BYTES / 2) {
      const target = keep > this.data.length ? Buffer.allocUnsafeSlow(Math.max(keep, 2 * this.data.length)) : this.data;
      this.data.copy(target, 0, this.position, this.filledTo);
      this.data = target;
      this.filledTo -= this.position;
      this.position = 0;
    }
    const bytesRead = readSync(this.fd, this.data, this.filledTo, this.data.length - this.filledTo, null);
    if (bytesRead === 0) this.atEnd = true;
    this.filledTo += bytesRead;
  }

  close(): void {
    closeSync(this.fd);
  }
}
