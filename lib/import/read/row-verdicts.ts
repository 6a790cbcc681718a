import type { DestinationUsers } from '../../ticketing/user-listing-client.ts';
import { emailKey } from '../../users/email-key.ts';
import type { FaultReason, RequiredColumn } from '../formats/assets.ts';
import { int64Halves } from '../formats/row-keys.ts';
import { RecordBuffer, writeComment, writeTicket, writeUser } from '../formats/spill-record.ts';
import { VerdictBytes, type SpareBuffers, type VerdictBatch } from '../formats/verdict-batch.ts';
import { destinationUserId, isFault, judgeRow } from './asset-rules.ts';
import type { ColumnMap } from './chat-columns.ts';
import type { CsvRow } from './csv-state.ts';
import { RecentEmails, RecentIds } from './recent-keys.ts';

/** Judges rows one by one (asset-rules.ts) into a verdict batch (formats/verdict-batch.ts). */
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
    verdicts.line(line);
    if (isFault(judged.ticket)) this.fault(row, columns, judged.ticket.reason, judged.ticket.column);
    else {
      const halves = this.halves;
      int64Halves(judged.ticket.id, halves);
      if (this.recentTickets.repeat(halves[0]!, halves[1]!)) verdicts.repeat(judged.ticket.id);
      else {
        verdicts.idCandidate(halves);
        writeTicket(this.tickets, judged.ticket);
      }
    }
    if (isFault(judged.comment)) this.fault(row, columns, judged.comment.reason, judged.comment.column);
    else {
      int64Halves(judged.comment.id, this.halves);
      verdicts.idCandidate(this.halves);
      writeComment(this.comments, judged.comment);
    }
    if (isFault(judged.user)) this.fault(row, columns, judged.user.reason, judged.user.column);
    else {
      const { author_id: authorId, name, email } = judged.user;
      const key = emailKey(email);
      if (this.recentUsers.repeat(key)) verdicts.repeat(key);
      else {
        const destinationId = destinationUserId(this.destinationUsers, key);
        verdicts.userCandidate(key, authorId ?? '', destinationId ?? '');
        // A complete user without AUTHOR_ID has a destination id (asset-rules' userOf).
        writeUser(this.users, { id: destinationId ?? authorId!, name, email });
      }
    }
    this.rows += 1;
  }

  private fault(row: CsvRow, columns: ColumnMap, reason: FaultReason, column: RequiredColumn): void {
    this.verdicts.fault(reason, column, row[columns[column]] ?? '');
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
