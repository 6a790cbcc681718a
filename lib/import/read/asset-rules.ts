import { emailKey } from '../../users/email-key.ts';
import { isBlank, parseBody, parseBoolean, parseEmail, parseInt64, parseName, parseTimestamp } from './parse-fields.ts';
import type { ColumnMap } from './chat-columns.ts';
import type { FaultReason, RequiredColumn } from '../formats/assets.ts';
import type { CsvRow } from './csv-state.ts';
import type { Comment, Ticket } from '../formats/spill-record.ts';
import type { DestinationUsers } from '../../ticketing/user-listing-client.ts';
import { canonicalInt64 } from '../../values/int64.ts';

// The import's assets, each row considered for each on its own (docs/import.md, assets; docs/architecture.md, "Keys and users").
/** A user as the CSV spells it; its final id is decided by resolution (take/resolve-users.ts). */
export interface UserRow {
  /** Null only when the destination holds the email (the destination id is then the user's id). */
  author_id: string | null;
  name: string;
  email: string;
}

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
  parsed.commentPartId === null ||
  parsed.conversationId === null ||
  parsed.authorId === null ||
  parsed.isPublic === null ||
  parsed.body === null ||
  parsed.commentCreatedAt === null
    ? null
    : {
        id: parsed.commentPartId,
        ticket_id: parsed.conversationId,
        author_id: parsed.authorId,
        public: parsed.isPublic,
        html_body: parsed.body,
        created_at: parsed.commentCreatedAt,
      };

/** An email's key (email-key.ts) → whether the destination holds it; absent when resolution is disabled. */
export type DestinationHolds = (key: string) => boolean;

/** The destination's id for an email (by its key, email-key.ts) as canonical decimal text, or null where it holds none. */
export const destinationUserId = (users: DestinationUsers | undefined, key: string): string | null => {
  if (users === undefined) return null;
  const raw = users.get(key);
  if (raw === undefined) return null;
  // Written as a bare JSON integer: anything else would corrupt the archive, so refuse it loudly.
  const id = canonicalInt64(raw);
  if (id === null) throw new TypeError('A destination user id is not a 64-bit integer');
  return id;
};

const userOf = (parsed: ParsedRow, destinationHolds?: DestinationHolds): UserRow | null =>
  parsed.name === null || parsed.email === null || (parsed.authorId === null && !(destinationHolds?.(emailKey(parsed.email)) ?? false))
    ? null
    : { author_id: parsed.authorId, name: parsed.name, email: parsed.email };

/** Why a row's asset was refused: the reason, and the one column it names. */
export interface Fault {
  reason: FaultReason;
  column: RequiredColumn;
}

/** Each asset's columns, in the order of its fields in the archive (docs/import.md, assets). */
const TICKET_COLUMNS = ['CONVERSATION_ID', 'TICKET_REQUESTER_ID', 'TICKET_CREATED_AT'] as const;
const COMMENT_COLUMNS = ['COMMENT_PART_ID', 'CONVERSATION_ID', 'AUTHOR_ID', 'COMMENT_PUBLIC', 'BODY', 'COMMENT_CREATED_AT'] as const;
const USER_COLUMNS = ['AUTHOR_ID', 'NAME', 'EMAIL'] as const;
/** A user whose email the destination holds takes the destination's id: AUTHOR_ID is not needed. */
const HELD_USER_COLUMNS = ['NAME', 'EMAIL'] as const;

const parsedValue = (parsed: ParsedRow, column: RequiredColumn): unknown => {
  switch (column) {
    case 'CONVERSATION_ID':
      return parsed.conversationId;
    case 'TICKET_REQUESTER_ID':
      return parsed.requesterId;
    case 'COMMENT_PART_ID':
      return parsed.commentPartId;
    case 'AUTHOR_ID':
      return parsed.authorId;
    case 'COMMENT_PUBLIC':
      return parsed.isPublic;
    case 'BODY':
      return parsed.body;
    case 'TICKET_CREATED_AT':
      return parsed.ticketCreatedAt;
    case 'COMMENT_CREATED_AT':
      return parsed.commentCreatedAt;
    case 'NAME':
      return parsed.name;
    case 'EMAIL':
      return parsed.email;
  }
};

/**
 * Why an incomplete row was refused, worked out only for refused rows: a blank required cell wins
 * over an unparsable one (`missing_field` before `bad_email` before `invalid_field`), so each refused
 * row counts under exactly one reason; the column named is the first with that reason, in the
 * asset's field order. BODY is only ever refused for being empty.
 */
const faultOf = (row: CsvRow, columns: ColumnMap, required: readonly RequiredColumn[], parsed: ParsedRow): Fault => {
  const blank = required.find((column) => (column === 'BODY' ? parsed.body === null : isBlank(row[columns[column]])));
  if (blank !== undefined) return { reason: 'missing_field', column: blank };
  if (required.includes('EMAIL') && parsed.email === null) return { reason: 'bad_email', column: 'EMAIL' };
  return { reason: 'invalid_field', column: required.find((column) => parsedValue(parsed, column) === null)! };
};

/** What one row offers each asset: its record, or why the asset refuses it. Pure: no key is looked up. */
export interface RowJudgement {
  ticket: Ticket | Fault;
  comment: Comment | Fault;
  user: UserRow | Fault;
}

export const isFault = (judged: object): judged is Fault => 'reason' in judged;

/**
 * Considers one row for all three assets on its own (docs/import.md, assets): each complete record,
 * or the fault that keeps it out. Which complete records win is the AssetDeduper's part.
 */
export const judgeRow = (row: CsvRow, columns: ColumnMap, destinationHolds?: DestinationHolds): RowJudgement => {
  const parsed = parseRow(row, columns);
  const ticket = ticketOf(parsed);
  const comment = commentOf(parsed);
  const user = userOf(parsed, destinationHolds);
  // Only a refused user needs to know whether the destination holds its email (which columns it lacks).
  const held = (): boolean => parsed.email !== null && (destinationHolds?.(emailKey(parsed.email)) ?? false);
  return {
    ticket: ticket ?? faultOf(row, columns, TICKET_COLUMNS, parsed),
    comment: comment ?? faultOf(row, columns, COMMENT_COLUMNS, parsed),
    user: user ?? faultOf(row, columns, held() ? HELD_USER_COLUMNS : USER_COLUMNS, parsed),
  };
};
