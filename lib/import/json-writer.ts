import type { Comment, Ticket } from './asset-rules.ts';
import type { ResolvedUser } from './resolve-users.ts';

/**
 * Hand-built JSON for the archive entries: ids are canonical decimal text written as bare JSON
 * integers (a double would round ids above 2^53), strings go through JSON.stringify (exact escaping,
 * BODY byte for byte), keys in the contract's table order. Timestamps are already canonical ASCII
 * from parseTimestamp and need no escaping.
 *
 * Tickets and comments are split around their one remappable reference (requester_id, author_id):
 * `prefix + id + suffix` is the record, so the reference can be replaced after the whole CSV was seen.
 */
export interface RemappableJson {
  reference: string;
  prefix: string;
  suffix: string;
}

export const ticketJson = (ticket: Ticket): RemappableJson => ({
  reference: ticket.requester_id,
  prefix: `{"id":${ticket.id},"requester_id":`,
  suffix: `,"created_at":"${ticket.created_at}"}`,
});

export const commentJson = (comment: Comment): RemappableJson => ({
  reference: comment.author_id,
  prefix: `{"id":${comment.id},"ticket_id":${comment.ticket_id},"author_id":`,
  suffix: `,"public":${comment.public},"html_body":${JSON.stringify(comment.html_body)},"created_at":"${comment.created_at}"}`,
});

export const userJson = (user: ResolvedUser): string =>
  `{"id":${user.id},"name":${JSON.stringify(user.name)},"email":${JSON.stringify(user.email)}}`;

const ENTRY_HEAD = Buffer.from('{"data":{"tickets":{"data":[');
const AFTER_TICKETS = Buffer.from('],"comments":[');
const AFTER_COMMENTS = Buffer.from('],"users":[');
const ENTRY_TAIL = Buffer.from('],"organizations":[]}}}');
const COMMA = Buffer.from(',');

/**
 * One archive entry as bytes, from records given as byte pieces (`tickets`/`comments`: three pieces
 * per record, see pushRemappable; `users`: one piece per record). Same text as `entryJson`.
 */
export const entryBytes = (tickets: readonly Buffer[], comments: readonly Buffer[], users: readonly Buffer[]): Buffer => {
  const parts: Buffer[] = [ENTRY_HEAD];
  const pushRecords = (pieces: readonly Buffer[], perRecord: number): void => {
    for (let index = 0; index < pieces.length; index += 1) {
      if (index > 0 && index % perRecord === 0) parts.push(COMMA);
      parts.push(pieces[index]!);
    }
  };
  pushRecords(tickets, 3);
  parts.push(AFTER_TICKETS);
  pushRecords(comments, 3);
  parts.push(AFTER_COMMENTS);
  pushRecords(users, 1);
  parts.push(ENTRY_TAIL);
  return Buffer.concat(parts);
};

/** One archive entry, from already serialized records. */
export const entryJson = (tickets: readonly string[], comments: readonly string[], users: readonly string[]): string =>
  `{"data":{"tickets":{"data":[${tickets.join(',')}],"comments":[${comments.join(',')}],"users":[${users.join(',')}],"organizations":[]}}}`;
