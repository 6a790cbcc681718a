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

/** One archive entry, from already serialized records. */
export const entryJson = (tickets: readonly string[], comments: readonly string[], users: readonly string[]): string =>
  `{"data":{"tickets":{"data":[${tickets.join(',')}],"comments":[${comments.join(',')}],"users":[${users.join(',')}],"organizations":[]}}}`;
