import { GrowableBuffer, maxUtf8Bytes } from '../../bytes/growable-buffer.ts';
import type { DestinationUsers } from '../../ticketing/user-listing-client.ts';
import { emailKey } from '../../users/email-key.ts';
import { destinationUserId, FAULT_REASONS, isFault, judgeRow, type Asset, type FaultReason } from './asset-rules.ts';
import { REQUIRED_COLUMNS, type ColumnMap, type RequiredColumn } from './chat-columns.ts';
import type { CsvRow } from './read-csv.ts';
import { RecentEmails, RecentIds } from './recent-keys.ts';
import { int64Halves } from './row-keys.ts';
import { recordEnd, RecordBuffer, writeComment, writeTicket, writeUser } from '../write/spill-record.ts';

/** What the read side hands the take side: plain buffers, moved between threads without copies (docs/architecture.md, "The verdict batch"). */
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

const CANDIDATE = 0;
const REPEAT = 1 + FAULT_REASONS.length;

/** Verdicts, encoded as they are written (the layout above). */
class VerdictBytes extends GrowableBuffer {
  u8(value: number): void {
    this.room(1);
    this.data[this.used++] = value;
  }

  /** Text behind its byte length as a `u8` or a `u32` (`lengthBytes`). */
  text(text: string, lengthBytes: 1 | 4): void {
    this.room(lengthBytes + maxUtf8Bytes(text));
    const at = this.used + lengthBytes;
    const length = this.data.write(text, at, 'utf8');
    this.data.writeUIntLE(length, this.used, lengthBytes);
    this.used = at + length;
  }

  /** A candidate's int64 key, as int64Halves gave it. */
  int64Key(halves: Int32Array): void {
    this.room(9);
    this.data[this.used] = CANDIDATE;
    this.data.writeInt32LE(halves[0]!, this.used + 1);
    this.data.writeInt32LE(halves[1]!, this.used + 5);
    this.used += 9;
  }
}

/** A taken batch's four buffers, given back to be written into again. */
type SpareBuffers = Record<'verdicts' | 'tickets' | 'comments' | 'users', Uint8Array | ArrayBuffer>;

/** Judges rows one by one (asset-rules.ts) into a batch. */
export class VerdictWriter {
  private readonly verdicts = new VerdictBytes();
  private readonly tickets = new RecordBuffer();
  private readonly comments = new RecordBuffer();
  private readonly users = new RecordBuffer();
  private readonly halves = new Int32Array(2);
  private readonly recentTickets = new RecentIds();
  private readonly recentUsers = new RecentEmails();
  private readonly destinationUsers: DestinationUsers | undefined;
  private readonly holds: ((key: string) => boolean) | undefined;
  private firstRow = 0;
  private rows = 0;

  constructor(destinationUsers: DestinationUsers | undefined) {
    this.destinationUsers = destinationUsers;
    this.holds = destinationUsers === undefined ? undefined : (email) => destinationUsers.has(email);
  }

  /** Bytes held so far: the caller cuts a batch once there are enough. */
  get bytes(): number {
    return this.verdicts.used + this.tickets.used + this.comments.used + this.users.used;
  }

  /** Judges one data row, which starts on `line` of the file (0 when lines are not counted). */
  add(row: CsvRow, line: number, columns: ColumnMap): void {
    const judged = judgeRow(row, columns, this.holds);
    const verdicts = this.verdicts;
    verdicts.room(4);
    verdicts.data.writeUInt32LE(line, verdicts.used);
    verdicts.used += 4;
    if (isFault(judged.ticket)) this.fault(row, columns, judged.ticket.reason, judged.ticket.column);
    else {
      const halves = this.halves;
      int64Halves(judged.ticket.id, halves);
      if (this.recentTickets.repeat(halves[0]!, halves[1]!)) {
        verdicts.u8(REPEAT);
        verdicts.text(judged.ticket.id, 4);
      } else {
        verdicts.int64Key(halves);
        writeTicket(this.tickets, judged.ticket);
      }
    }
    if (isFault(judged.comment)) this.fault(row, columns, judged.comment.reason, judged.comment.column);
    else {
      int64Halves(judged.comment.id, this.halves);
      verdicts.int64Key(this.halves);
      writeComment(this.comments, judged.comment);
    }
    if (isFault(judged.user)) this.fault(row, columns, judged.user.reason, judged.user.column);
    else {
      const { author_id: authorId, name, email } = judged.user;
      const key = emailKey(email);
      if (this.recentUsers.repeat(key)) {
        verdicts.u8(REPEAT);
        verdicts.text(key, 4);
      } else {
        const destinationId = destinationUserId(this.destinationUsers, key);
        verdicts.u8(CANDIDATE);
        verdicts.text(key, 4);
        verdicts.text(authorId ?? '', 1);
        verdicts.text(destinationId ?? '', 1);
        // A complete user without AUTHOR_ID has a destination id (asset-rules' userOf).
        writeUser(this.users, { id: destinationId ?? authorId!, name, email });
      }
    }
    this.rows += 1;
  }

  private fault(row: CsvRow, columns: ColumnMap, reason: FaultReason, column: RequiredColumn): void {
    this.verdicts.u8(1 + FAULT_REASONS.indexOf(reason));
    this.verdicts.u8(REQUIRED_COLUMNS.indexOf(column));
    this.verdicts.text(row[columns[column]] ?? '', 4);
  }

  /**
   * The batch so far, in buffers of its own (each its own memory, so it can move to another thread);
   * the next one starts after it, in the buffers of a batch given back to `recycle` if there is one.
   */
  take(bytesRead: number): VerdictBatch {
    const batch: VerdictBatch = {
      firstRow: this.firstRow,
      rows: this.rows,
      bytesRead,
      verdicts: this.verdicts.take(),
      tickets: this.tickets.take(),
      comments: this.comments.take(),
      users: this.users.take(),
    };
    this.firstRow += this.rows;
    this.rows = 0;
    return batch;
  }

  /** Numbers rows from 0 again: a new part of the file starts (read-worker.ts), the last one's batches all handed out. */
  restartRows(): void {
    this.firstRow = 0;
    this.rows = 0;
  }

  /** Gives back the buffers of a batch its taker is done with, to write later batches into. */
  recycle(batch: SpareBuffers): void {
    this.verdicts.giveBack(batch.verdicts);
    this.tickets.giveBack(batch.tickets);
    this.comments.giveBack(batch.comments);
    this.users.giveBack(batch.users);
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
