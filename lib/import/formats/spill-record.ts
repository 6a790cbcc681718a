import { GrowableBuffer, maxUtf8Bytes } from '../../bytes/growable-buffer.ts';

// The spill record: a winning record as its final JSON behind a 6-byte header (docs/architecture.md, "The spill record").
const RECORD_HEADER_BYTES = 6;

/** A ticket as the archive holds it (docs/import.md, assets); integers are canonical decimal text. */
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

/** A winning user with its final id (the destination's, or its AUTHOR_ID). */
export interface ResolvedUser {
  id: string;
  name: string;
  email: string;
}

/**
 * Encodes records in the spill layout, piece by piece with no intermediate strings: the read side
 * builds a batch's records here, and the take side copies the winners into their spill as they are.
 */
export class RecordBuffer extends GrowableBuffer {
  private recordStart = 0;

  /** Bytes held so far. */
  get length(): number {
    return this.used;
  }

  /** Starts a record whose JSON takes at most `maxBytes` (see maxUtf8Bytes). */
  begin(maxBytes: number): void {
    this.room(RECORD_HEADER_BYTES + maxBytes);
    this.recordStart = this.used;
    this.data.writeUInt16LE(0, this.used + 4);
    this.used += RECORD_HEADER_BYTES;
  }

  /**
   * Appends text known to be ASCII (ids, timestamps). A loop in JS: these strings are short, and a
   * native Buffer#write call per piece costs more than copying their few characters.
   */
  ascii(text: string): void {
    const data = this.data;
    let used = this.used;
    for (let index = 0; index < text.length; index += 1) data[used++] = text.charCodeAt(index);
    this.used = used;
  }

  /** Appends pre-encoded bytes (JSON punctuation and keys). */
  bytes(piece: Uint8Array): void {
    const data = this.data;
    let used = this.used;
    for (let index = 0; index < piece.length; index += 1) data[used++] = piece[index]!;
    this.used = used;
  }

  /** Appends any text as UTF-8. */
  utf8(text: string): void {
    this.used += this.data.write(text, this.used, 'utf8');
  }

  /** Appends the record's remappable reference (ASCII digits). */
  reference(text: string): void {
    this.data[this.recordStart + 4] = this.used - this.recordStart - RECORD_HEADER_BYTES;
    this.data[this.recordStart + 5] = text.length;
    this.ascii(text);
  }

  end(): void {
    this.data.writeUInt32LE(this.used - this.recordStart - RECORD_HEADER_BYTES, this.recordStart);
  }
}

// Hand-built JSON, keys in the order of docs/import.md's asset table (docs/architecture.md, "The spill record").
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

const userJson = (user: ResolvedUser): string =>
  `{"id":${user.id},"name":${JSON.stringify(user.name)},"email":${JSON.stringify(user.email)}}`;

export const writeUser = (spill: RecordBuffer, user: ResolvedUser): void => {
  const json = userJson(user);
  spill.begin(maxUtf8Bytes(json));
  spill.utf8(json);
  spill.end();
};

/** Records `[start, end)` of `data`, `count` of them, valid until the reader's next `load`. */
export interface SpillSlice {
  data: Buffer;
  start: number;
  end: number;
  count: number;
}

// Reading a record back. `at` is where a record (its header) starts: a slice's records run from
// `slice.start`, each next one starting at the previous one's `recordEnd`, until `slice.end`.

/** Where the record's JSON starts. */
export const jsonStart = (at: number): number => at + RECORD_HEADER_BYTES;
/** Where the record's JSON ends: also where the next record starts. */
export const recordEnd = (data: Buffer, at: number): number => at + RECORD_HEADER_BYTES + data.readUInt32LE(at);
/** Bytes of the record at `at`, header included, of which the first `available` are at hand: a header's worth until the header is. */
export const recordBytes = (data: Buffer, at: number, available: number): number =>
  available < RECORD_HEADER_BYTES ? RECORD_HEADER_BYTES : RECORD_HEADER_BYTES + data.readUInt32LE(at);
/** Where the record's reference starts (meaningful only when its length is above 0). */
export const referenceStart = (data: Buffer, at: number): number => at + RECORD_HEADER_BYTES + data[at + 4]!;
/** The reference's length in bytes; 0 for a record without one. */
export const referenceLength = (data: Buffer, at: number): number => data[at + 5]!;
/** The bytes of the slice's JSON texts, headers left out. */
export const sliceJsonBytes = (slice: SpillSlice): number => slice.end - slice.start - slice.count * RECORD_HEADER_BYTES;

/** A ticket's or comment's id as spilled (its JSON starts `{"id":` and the id runs to the next comma). */
export const recordIdText = (data: Buffer, at: number): string => {
  const start = jsonStart(at) + TICKET_ID.length;
  return data.toString('latin1', start, data.indexOf(COMMA, start));
};
