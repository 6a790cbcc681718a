import { Int64Set, ownedCopy } from './int64-set.ts';
import { isBlank, parseBody, parseBoolean, parseEmail, parseInt64, parseName, parseTimestamp } from './parse-fields.ts';
import type { ColumnMap, RequiredColumn } from './chat-columns.ts';
import type { CsvRow } from './read-csv.ts';

/**
 * The import's assets (docs/import.md): every row is considered for each asset on its own. A row whose fields for
 * an asset are not all present contributes nothing to it; among the rows that do, the first per key
 * wins. Integers are canonical decimal text, never numbers.
 *
 * A user's fields are `{ id, name, email }`, and its id is the destination's id for the email where
 * the destination holds one, else AUTHOR_ID. So a user row is complete when NAME is non-blank, EMAIL
 * is valid, and it has an id: AUTHOR_ID a 64-bit integer, or an email the destination holds.
 */
export interface Ticket {
  id: string;
  requester_id: string;
  created_at: string;
}

export interface Comment {
  id: string;
  ticket_id: string;
  author_id: string;
  public: boolean;
  html_body: string;
  created_at: string;
}

/** A user as the CSV spells it; its final id is decided by resolution (resolve-users.ts). */
export interface UserRow {
  /** Null only when the destination holds the email (the destination id is then the user's id). */
  author_id: string | null;
  name: string;
  email: string;
}

const TICKET_DROP_REASONS = ['missing_field', 'invalid_field', 'duplicate'] as const;
const COMMENT_DROP_REASONS = ['missing_field', 'invalid_field', 'duplicate'] as const;
const USER_DROP_REASONS = ['missing_field', 'bad_email', 'invalid_field', 'duplicate'] as const;
export type DropReason = 'missing_field' | 'invalid_field' | 'bad_email' | 'duplicate';

/** Every cell of a row parsed once (CONVERSATION_ID and AUTHOR_ID serve two assets each). */
export interface ParsedRow {
  conversationId: string | null;
  requesterId: string | null;
  commentPartId: string | null;
  authorId: string | null;
  isPublic: boolean | null;
  body: string | null;
  ticketCreatedAt: string | null;
  commentCreatedAt: string | null;
  name: string | null;
  email: string | null;
}

const parseRow = (row: CsvRow, columns: ColumnMap): ParsedRow => ({
  conversationId: parseInt64(row[columns.CONVERSATION_ID]),
  requesterId: parseInt64(row[columns.TICKET_REQUESTER_ID]),
  commentPartId: parseInt64(row[columns.COMMENT_PART_ID]),
  authorId: parseInt64(row[columns.AUTHOR_ID]),
  isPublic: parseBoolean(row[columns.COMMENT_PUBLIC]),
  body: parseBody(row[columns.BODY]),
  ticketCreatedAt: parseTimestamp(row[columns.TICKET_CREATED_AT]),
  commentCreatedAt: parseTimestamp(row[columns.COMMENT_CREATED_AT]),
  name: parseName(row[columns.NAME]),
  email: parseEmail(row[columns.EMAIL]),
});

const ticketOf = (parsed: ParsedRow): Ticket | null =>
  parsed.conversationId === null || parsed.requesterId === null || parsed.ticketCreatedAt === null
    ? null
    : { id: parsed.conversationId, requester_id: parsed.requesterId, created_at: parsed.ticketCreatedAt };

const commentOf = (parsed: ParsedRow): Comment | null =>
  parsed.commentPartId === null || parsed.conversationId === null || parsed.authorId === null ||
  parsed.isPublic === null || parsed.body === null || parsed.commentCreatedAt === null
    ? null
    : {
        id: parsed.commentPartId,
        ticket_id: parsed.conversationId,
        author_id: parsed.authorId,
        public: parsed.isPublic,
        html_body: parsed.body,
        created_at: parsed.commentCreatedAt,
      };

/** Lower-cased email → whether the destination holds it; absent when resolution is disabled. */
export type DestinationHolds = (lowerCaseEmail: string) => boolean;

const userOf = (parsed: ParsedRow, destinationHolds?: DestinationHolds): UserRow | null =>
  parsed.name === null || parsed.email === null ||
  (parsed.authorId === null && !(destinationHolds?.(parsed.email.toLowerCase()) ?? false))
    ? null
    : { author_id: parsed.authorId, name: parsed.name, email: parsed.email };

/**
 * Why an incomplete row was refused, worked out only for refused rows: a blank required cell wins
 * over an unparsable one (`missing_field` before `bad_email` before `invalid_field`), so each refused
 * row counts under exactly one reason. BODY is only ever refused for being empty.
 */
const TICKET_COLUMNS = ['CONVERSATION_ID', 'TICKET_REQUESTER_ID', 'TICKET_CREATED_AT'] as const;
const COMMENT_COLUMNS = ['COMMENT_PART_ID', 'CONVERSATION_ID', 'AUTHOR_ID', 'COMMENT_PUBLIC', 'BODY', 'COMMENT_CREATED_AT'] as const;
const USER_COLUMNS = ['AUTHOR_ID', 'NAME', 'EMAIL'] as const;

const faultOf = (row: CsvRow, columns: ColumnMap, required: readonly RequiredColumn[], parsed: ParsedRow): DropReason => {
  if (required.some((column) => (column === 'BODY' ? parsed.body === null : isBlank(row[columns[column]])))) {
    return 'missing_field';
  }
  if (required.includes('EMAIL') && parsed.email === null) return 'bad_email';
  return 'invalid_field';
};

export type DropCounts = Record<string, number>;

const zeroCounts = (reasons: readonly string[]): DropCounts => Object.fromEntries(reasons.map((reason) => [reason, 0]));

/** What one row contributes to each asset: its record, or null where the asset did not take it. */
export interface RowAssets {
  ticket: Ticket | null;
  comment: Comment | null;
  user: UserRow | null;
}

/**
 * "First complete row per key wins" for the three assets. Holds only the keys seen (ids in compact
 * Int64Sets; lower-cased emails, copied off the input chunk) and the drop counts: the winning records
 * go straight to the caller, who spills them, so memory grows with distinct keys only.
 */
export class AssetDeduper {
  readonly dropped = {
    tickets: zeroCounts(TICKET_DROP_REASONS),
    comments: zeroCounts(COMMENT_DROP_REASONS),
    users: zeroCounts(USER_DROP_REASONS),
  };
  private readonly ticketIds = new Int64Set();
  private readonly commentIds = new Int64Set();
  private readonly userEmails = new Set<string>();
  private readonly destinationHolds: DestinationHolds | undefined;

  constructor(destinationHolds?: DestinationHolds) {
    this.destinationHolds = destinationHolds;
  }

  /** Considers one row for all three assets: the records it wins; each refusal is counted by its reason. */
  takeRow(row: CsvRow, columns: ColumnMap): RowAssets {
    const parsed = parseRow(row, columns);
    let ticket = ticketOf(parsed);
    if (ticket === null) this.drop(this.dropped.tickets, faultOf(row, columns, TICKET_COLUMNS, parsed));
    else if (!this.ticketIds.add(ticket.id)) ticket = this.drop(this.dropped.tickets, 'duplicate');

    let comment = commentOf(parsed);
    if (comment === null) this.drop(this.dropped.comments, faultOf(row, columns, COMMENT_COLUMNS, parsed));
    else if (!this.commentIds.add(comment.id)) comment = this.drop(this.dropped.comments, 'duplicate');

    let user = userOf(parsed, this.destinationHolds);
    if (user === null) {
      this.drop(this.dropped.users, faultOf(row, columns, USER_COLUMNS, parsed));
    } else {
      // Users are keyed by email compared case-insensitively; the email keeps the row's spelling.
      const key = user.email.toLowerCase();
      if (this.userEmails.has(key)) user = this.drop(this.dropped.users, 'duplicate');
      else this.userEmails.add(ownedCopy(key));
    }
    return { ticket, comment, user };
  }

  private drop(counts: DropCounts, reason: DropReason): null {
    counts[reason] = (counts[reason] ?? 0) + 1;
    return null;
  }
}
