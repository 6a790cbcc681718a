import { openSync, readSync, closeSync } from 'node:fs';
import { recordBytes, type SpillSlice } from '../formats/spill-record.ts';

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
      const needed = recordBytes(this.data, at, available);
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
