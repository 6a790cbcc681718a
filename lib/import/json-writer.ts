import type { Comment, Ticket } from './asset-rules.ts';
import { jsonStart, maxUtf8Bytes, recordEnd, referenceLength, referenceStart, sliceJsonBytes } from './spill-files.ts';
import type { RecordBuffer, SpillSlice } from './spill-files.ts';

/**
 * Hand-built JSON for the archive entries: ids are canonical decimal text written as bare JSON
 * integers (a double would round ids above 2^53), strings go through JSON.stringify (exact escaping,
 * BODY byte for byte), keys in the order of docs/import.md's asset table. Timestamps are already canonical ASCII
 * from parseTimestamp and need no escaping.
 *
 * Records are encoded straight into a spill file, each with its one remappable reference
 * (requester_id, author_id) located, so it can be replaced after the whole CSV was seen.
 */
const ascii = (text: string): Buffer => Buffer.from(text, 'latin1');
const COMMA = 44;
const TICKET_ID = ascii('{"id":');
const TICKET_REQUESTER = ascii(',"requester_id":');
const CREATED_AT = ascii(',"created_at":"');
const RECORD_END = ascii('"}');
const COMMENT_ID = TICKET_ID;
const COMMENT_TICKET = ascii(',"ticket_id":');
const COMMENT_AUTHOR = ascii(',"author_id":');
const COMMENT_PUBLIC = ascii(',"public":true,"html_body":');
const COMMENT_PRIVATE = ascii(',"public":false,"html_body":');
const TICKET_FIXED_BYTES = TICKET_ID.length + TICKET_REQUESTER.length + CREATED_AT.length + RECORD_END.length;
const COMMENT_FIXED_BYTES =
  COMMENT_ID.length + COMMENT_TICKET.length + COMMENT_AUTHOR.length + COMMENT_PRIVATE.length + CREATED_AT.length + RECORD_END.length;

/** `{"id":…,"requester_id":…,"created_at":"…"}`, piece by piece: no record string is ever built. */
export const writeTicket = (spill: RecordBuffer, ticket: Ticket): void => {
  spill.begin(TICKET_FIXED_BYTES + ticket.id.length + ticket.requester_id.length + ticket.created_at.length);
  spill.bytes(TICKET_ID);
  spill.ascii(ticket.id);
  spill.bytes(TICKET_REQUESTER);
  spill.reference(ticket.requester_id);
  spill.bytes(CREATED_AT);
  spill.ascii(ticket.created_at);
  spill.bytes(RECORD_END);
  spill.end();
};

/** `{"id":…,"ticket_id":…,"author_id":…,"public":…,"html_body":"…","created_at":"…"}`. */
export const writeComment = (spill: RecordBuffer, comment: Comment): void => {
  const body = JSON.stringify(comment.html_body);
  spill.begin(
    COMMENT_FIXED_BYTES +
      comment.id.length +
      comment.ticket_id.length +
      comment.author_id.length +
      maxUtf8Bytes(body) +
      comment.created_at.length,
  );
  spill.bytes(COMMENT_ID);
  spill.ascii(comment.id);
  spill.bytes(COMMENT_TICKET);
  spill.ascii(comment.ticket_id);
  spill.bytes(COMMENT_AUTHOR);
  spill.reference(comment.author_id);
  spill.bytes(comment.public ? COMMENT_PUBLIC : COMMENT_PRIVATE);
  spill.utf8(body);
  spill.bytes(CREATED_AT);
  spill.ascii(comment.created_at);
  spill.bytes(RECORD_END);
  spill.end();
};

/** A ticket's or comment's id as spilled (its JSON starts `{"id":` and the id runs to the next comma). */
export const recordIdText = (data: Buffer, at: number): string => {
  const start = jsonStart(at) + TICKET_ID.length;
  return data.toString('latin1', start, data.indexOf(COMMA, start));
};

/** A winning user with its final id (the destination's, or its AUTHOR_ID). */
export interface ResolvedUser {
  id: string;
  name: string;
  email: string;
}

const userJson = (user: ResolvedUser): string =>
  `{"id":${user.id},"name":${JSON.stringify(user.name)},"email":${JSON.stringify(user.email)}}`;

export const writeUser = (spill: RecordBuffer, user: ResolvedUser): void => {
  const json = userJson(user);
  spill.begin(maxUtf8Bytes(json));
  spill.utf8(json);
  spill.end();
};

const ENTRY_HEAD = Buffer.from('{"data":{"tickets":{"data":[');
const AFTER_TICKETS = Buffer.from('],"comments":[');
const AFTER_COMMENTS = Buffer.from('],"users":[');
const ENTRY_TAIL = Buffer.from('],"organizations":[]}}}');
const FIXED_BYTES = ENTRY_HEAD.length + AFTER_TICKETS.length + AFTER_COMMENTS.length + ENTRY_TAIL.length;

/** The id a reference is written with; undefined: unchanged (the common case, no lookup at all). */
export type Remap = ((reference: string) => string) | undefined;

/** Replacement texts for a slice's references, or null where a record stays as spilled. */
const remapsOf = (slice: SpillSlice, remap: Remap): (Buffer | null)[] | undefined => {
  if (remap === undefined) return undefined;
  const { data } = slice;
  const targets: (Buffer | null)[] = [];
  for (let at = slice.start; at < slice.end; at = recordEnd(data, at)) {
    const from = referenceStart(data, at);
    const reference = data.toString('latin1', from, from + referenceLength(data, at));
    const target = remap(reference);
    targets.push(target === reference ? null : Buffer.from(target, 'latin1'));
  }
  return targets;
};

/** Bytes of a slice's records in the entry: their JSON, the remaps' size changes, the commas. */
const slicedBytes = (slice: SpillSlice, targets: readonly (Buffer | null)[] | undefined): number => {
  let bytes = sliceJsonBytes(slice) + Math.max(slice.count - 1, 0);
  if (targets === undefined) return bytes;
  let index = 0;
  for (let at = slice.start; at < slice.end; at = recordEnd(slice.data, at), index += 1) {
    const target = targets[index];
    if (target) bytes += target.length - referenceLength(slice.data, at);
  }
  return bytes;
};

/** Copies a slice's records into `entry` at `offset`, comma separated; returns the new offset. */
const copyRecords = (entry: Buffer, offset: number, slice: SpillSlice, targets: readonly (Buffer | null)[] | undefined): number => {
  const { data } = slice;
  let index = 0;
  for (let at = slice.start; at < slice.end; index += 1) {
    const json = jsonStart(at);
    const next = recordEnd(data, at);
    if (index > 0) entry[offset++] = COMMA;
    const target = targets?.[index];
    if (target) {
      const from = referenceStart(data, at);
      offset += data.copy(entry, offset, json, from);
      offset += target.copy(entry, offset);
      offset += data.copy(entry, offset, from + referenceLength(data, at), next);
    } else {
      offset += data.copy(entry, offset, json, next);
    }
    at = next;
  }
  return offset;
};

/**
 * One archive entry as bytes, spliced from the three spill slices, references rewritten by `remap`
 * (tickets and comments; users carry their final id already). Sized exactly, then filled by copies.
 */
export const entryBytes = (tickets: SpillSlice, comments: SpillSlice, users: SpillSlice, remap: Remap): Buffer => {
  const ticketTargets = remapsOf(tickets, remap);
  const commentTargets = remapsOf(comments, remap);
  const entry = Buffer.allocUnsafe(
    FIXED_BYTES + slicedBytes(tickets, ticketTargets) + slicedBytes(comments, commentTargets) + slicedBytes(users, undefined),
  );
  let offset = ENTRY_HEAD.copy(entry, 0);
  offset = copyRecords(entry, offset, tickets, ticketTargets);
  offset += AFTER_TICKETS.copy(entry, offset);
  offset = copyRecords(entry, offset, comments, commentTargets);
  offset += AFTER_COMMENTS.copy(entry, offset);
  offset = copyRecords(entry, offset, users, undefined);
  ENTRY_TAIL.copy(entry, offset);
  return entry;
};
