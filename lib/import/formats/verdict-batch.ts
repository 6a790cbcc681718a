import { GrowableBuffer, maxUtf8Bytes } from '../../bytes/growable-buffer.ts';
import { FAULT_REASONS, REQUIRED_COLUMNS, type Asset, type FaultReason, type RequiredColumn } from './assets.ts';
import { recordEnd } from './spill-record.ts';

// The verdict batch: what the read side hands the take side (docs/architecture.md, "The verdict batch").
// This module owns its layout: the read side writes it through VerdictBytes, the take side reads it back with visitVerdicts.

/** What the read side hands the take side: plain buffers, moved between threads without copies. */
export interface VerdictBatch {
  /** The batch's first data row, counted from 0 over the whole file. */
  firstRow: number;
  rows: number;
  /** Source bytes consumed when the batch was cut (for progress). */
  bytesRead: number;
  verdicts: Buffer;
  tickets: Buffer;
  comments: Buffer;
  users: Buffer;
}

/** A taken batch's four buffers, given back to be written into again. */
export type SpareBuffers = Record<'verdicts' | 'tickets' | 'comments' | 'users', Uint8Array | ArrayBuffer>;

const CANDIDATE = 0;
const REPEAT = 1 + FAULT_REASONS.length;

/** A batch's `verdicts` buffer, encoded as it is written, one row's verdicts after another. */
export class VerdictBytes extends GrowableBuffer {
  /** A row starts, on `line` of the file: its three verdicts (ticket, comment, user) follow. */
  line(line: number): void {
    this.room(4);
    this.data.writeUInt32LE(line, this.used);
    this.used += 4;
  }

  /** A complete ticket or comment, keyed by its id's halves (row-keys.ts' int64Halves). */
  idCandidate(halves: Int32Array): void {
    this.room(9);
    this.data[this.used] = CANDIDATE;
    this.data.writeInt32LE(halves[0]!, this.used + 1);
    this.data.writeInt32LE(halves[1]!, this.used + 5);
    this.used += 9;
  }

  /** A complete user: its email key, AUTHOR_ID and destination id ('' for none). */
  userCandidate(emailKey: string, authorId: string, destinationId: string): void {
    this.u8(CANDIDATE);
    this.text(emailKey, 4);
    this.text(authorId, 1);
    this.text(destinationId, 1);
  }

  /** A candidate whose key certainly won already, by its key as the rejects file names a duplicate. */
  repeat(key: string): void {
    this.u8(REPEAT);
    this.text(key, 4);
  }

  /** The asset refused the row: why, the column at fault and its cell as given. */
  fault(reason: FaultReason, column: RequiredColumn, cell: string): void {
    this.u8(1 + FAULT_REASONS.indexOf(reason));
    this.u8(REQUIRED_COLUMNS.indexOf(column));
    this.text(cell, 4);
  }

  private u8(value: number): void {
    this.room(1);
    this.data[this.used++] = value;
  }

  /** Text behind its byte length as a `u8` or a `u32` (`lengthBytes`). */
  private text(text: string, lengthBytes: 1 | 4): void {
    this.room(lengthBytes + maxUtf8Bytes(text));
    const at = this.used + lengthBytes;
    const length = this.data.write(text, at, 'utf8');
    this.data.writeUIntLE(length, this.used, lengthBytes);
    this.used = at + length;
  }
}

/** The take side's part for each verdict of a batch, in file order. */
export interface VerdictVisitor {
  /** A new row: its number (from 1) and the line it starts on. */
  row(row: number, line: number): void;
  /** A complete ticket or comment: its record is `records[start, end)`. */
  idCandidate(asset: 'tickets' | 'comments', high: number, low: number, records: Buffer, start: number, end: number): void;
  /** A complete user: its record is `records[start, end)`. */
  userCandidate(emailKey: string, authorId: string | null, destinationId: string | null, records: Buffer, start: number, end: number): void;
  /** An asset refused the row: the cell at fault is `verdicts[start, end)`. */
  fault(asset: Asset, reason: FaultReason, column: RequiredColumn, verdicts: Buffer, start: number, end: number): void;
  /** A complete candidate whose key certainly won already: the key (as rejects name it) is `verdicts[start, end)`. */
  repeat(asset: Asset, verdicts: Buffer, start: number, end: number): void;
}

/** Reads a batch back, calling `visitor` for each row and each of its three verdicts. */
export const visitVerdicts = (batch: VerdictBatch, visitor: VerdictVisitor): void => {
  const { verdicts } = batch;
  let at = 0;
  let ticketAt = 0;
  let commentAt = 0;
  let userAt = 0;
  /** Reads a fault's column and cell, or a repeat's key, after its tag. */
  const fault = (asset: Asset, tag: number): void => {
    if (tag === REPEAT) {
      const length = verdicts.readUInt32LE(at);
      visitor.repeat(asset, verdicts, at + 4, at + 4 + length);
      at += 4 + length;
      return;
    }
    const column = REQUIRED_COLUMNS[verdicts[at]!]!;
    const length = verdicts.readUInt32LE(at + 1);
    visitor.fault(asset, FAULT_REASONS[tag - 1]!, column, verdicts, at + 5, at + 5 + length);
    at += 5 + length;
  };
  for (let index = 0; index < batch.rows; index += 1) {
    visitor.row(batch.firstRow + index + 1, verdicts.readUInt32LE(at));
    at += 4;
    for (const asset of ['tickets', 'comments'] as const) {
      const tag = verdicts[at++]!;
      if (tag !== CANDIDATE) {
        fault(asset, tag);
        continue;
      }
      const records = asset === 'tickets' ? batch.tickets : batch.comments;
      const start = asset === 'tickets' ? ticketAt : commentAt;
      const end = recordEnd(records, start);
      visitor.idCandidate(asset, verdicts.readInt32LE(at), verdicts.readInt32LE(at + 4), records, start, end);
      at += 8;
      if (asset === 'tickets') ticketAt = end;
      else commentAt = end;
    }
    const tag = verdicts[at++]!;
    if (tag !== CANDIDATE) {
      fault('users', tag);
      continue;
    }
    const emailLength = verdicts.readUInt32LE(at);
    const userKey = verdicts.toString('utf8', at + 4, at + 4 + emailLength);
    at += 4 + emailLength;
    const authorLength = verdicts[at]!;
    const authorId = authorLength === 0 ? null : verdicts.toString('latin1', at + 1, at + 1 + authorLength);
    at += 1 + authorLength;
    const destinationLength = verdicts[at]!;
    const destinationId = destinationLength === 0 ? null : verdicts.toString('latin1', at + 1, at + 1 + destinationLength);
    at += 1 + destinationLength;
    const end = recordEnd(batch.users, userAt);
    visitor.userCandidate(userKey, authorId, destinationId, batch.users, userAt, end);
    userAt = end;
  }
};
