import { Int64Set, ownedCopy } from './int64-set.ts';
import { isBlank, parseBody, parseBoolean, parseEmail, parseInt64, parseName, parseTimestamp } from './parse-fields.ts';
import type { ColumnMap, CsvRow } from './read-csv.ts';

/**
 * CONTRACT §5 "Assets": every row is considered for each asset on its own. A row whose fields for
 * an asset are not all present contributes nothing to it; among the rows that do, the first per key
 * wins. Integers are canonical decimal text, never numbers.
 *
 * A user row is complete when NAME is non-blank, EMAIL is valid AND AUTHOR_ID is a 64-bit integer —
 * AUTHOR_ID even when the destination holds the email, so the set of users never depends on the
 * destination, and every user keeps the AUTHOR_ID its references need for the remap.
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
  author_id: string;
  name: string;
  email: string;
}

export const TICKET_DROP_REASONS = ['missing_field', 'invalid_field', 'duplicate'] as const;
export const COMMENT_DROP_REASONS = ['missing_field', 'invalid_field', 'duplicate'] as const;
export const USER_DROP_REASONS = ['missing_field', 'bad_email', 'invalid_field', 'duplicate'] as const;
export type DropReason = 'missing_field' | 'invalid_field' | 'bad_email' | 'duplicate';

/**
 * Why an incomplete row was refused: a blank required cell wins over an unparsable one
 * (`missing_field` before `invalid_field`), so each refused row counts under exactly one reason.
 */
const faultOf = (raws: readonly (string | undefined)[]): DropReason =>
  raws.some(isBlank) ? 'missing_field' : 'invalid_field';

export type Built<T> = { ok: true; value: T } | { ok: false; reason: DropReason };

export const buildTicket = (row: CsvRow, columns: ColumnMap): Built<Ticket> => {
  const rawId = row[columns.CONVERSATION_ID];
  const rawRequester = row[columns.TICKET_REQUESTER_ID];
  const rawCreated = row[columns.TICKET_CREATED_AT];
  const id = parseInt64(rawId);
  const requester = parseInt64(rawRequester);
  const created = parseTimestamp(rawCreated);
  if (id === null || requester === null || created === null) {
    const failed = [id === null ? rawId : 'ok', requester === null ? rawRequester : 'ok', created === null ? rawCreated : 'ok'];
    return { ok: false, reason: faultOf(failed) };
  }
  return { ok: true, value: { id, requester_id: requester, created_at: created } };
};

export const buildComment = (row: CsvRow, columns: ColumnMap): Built<Comment> => {
  const rawId = row[columns.COMMENT_PART_ID];
  const rawTicket = row[columns.CONVERSATION_ID];
  const rawAuthor = row[columns.AUTHOR_ID];
  const rawPublic = row[columns.COMMENT_PUBLIC];
  const rawBody = row[columns.BODY];
  const rawCreated = row[columns.COMMENT_CREATED_AT];
  const id = parseInt64(rawId);
  const ticket = parseInt64(rawTicket);
  const author = parseInt64(rawAuthor);
  const isPublic = parseBoolean(rawPublic);
  const body = parseBody(rawBody);
  const created = parseTimestamp(rawCreated);
  if (id === null || ticket === null || author === null || isPublic === null || body === null || created === null) {
    const failed = [
      id === null ? rawId : 'ok',
      ticket === null ? rawTicket : 'ok',
      author === null ? rawAuthor : 'ok',
      isPublic === null ? rawPublic : 'ok',
      // A body is only ever refused for being empty.
      body === null ? undefined : 'ok',
      created === null ? rawCreated : 'ok',
    ];
    return { ok: false, reason: faultOf(failed) };
  }
  return {
    ok: true,
    value: { id, ticket_id: ticket, author_id: author, public: isPublic, html_body: body, created_at: created },
  };
};

export const buildUser = (row: CsvRow, columns: ColumnMap): Built<UserRow> => {
  const rawAuthor = row[columns.AUTHOR_ID];
  const rawName = row[columns.NAME];
  const rawEmail = row[columns.EMAIL];
  const author = parseInt64(rawAuthor);
  const name = parseName(rawName);
  const email = parseEmail(rawEmail);
  if (author === null || name === null || email === null) {
    if (isBlank(rawAuthor) || isBlank(rawName) || isBlank(rawEmail)) return { ok: false, reason: 'missing_field' };
    return { ok: false, reason: email === null ? 'bad_email' : 'invalid_field' };
  }
  return { ok: true, value: { author_id: author, name, email } };
};

export type DropCounts = Record<string, number>;

const zeroCounts = (reasons: readonly string[]): DropCounts => Object.fromEntries(reasons.map((reason) => [reason, 0]));

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

  /** The ticket this row contributes, or null (the reason is counted). */
  takeTicket(row: CsvRow, columns: ColumnMap): Ticket | null {
    const built = buildTicket(row, columns);
    return this.keep(built, this.dropped.tickets, (ticket) => this.ticketIds.add(ticket.id));
  }

  takeComment(row: CsvRow, columns: ColumnMap): Comment | null {
    const built = buildComment(row, columns);
    return this.keep(built, this.dropped.comments, (comment) => this.commentIds.add(comment.id));
  }

  /** Users are keyed by email compared case-insensitively; the email keeps the row's spelling. */
  takeUser(row: CsvRow, columns: ColumnMap): UserRow | null {
    const built = buildUser(row, columns);
    return this.keep(built, this.dropped.users, (user) => {
      const key = user.email.toLowerCase();
      if (this.userEmails.has(key)) return false;
      this.userEmails.add(ownedCopy(key));
      return true;
    });
  }

  /** `claim` records the key and says whether it was new. */
  private keep<T>(built: Built<T>, dropped: DropCounts, claim: (value: T) => boolean): T | null {
    if (!built.ok) {
      dropped[built.reason] = (dropped[built.reason] ?? 0) + 1;
      return null;
    }
    if (!claim(built.value)) {
      dropped.duplicate = (dropped.duplicate ?? 0) + 1;
      return null;
    }
    return built.value;
  }
}
