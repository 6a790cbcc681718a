import { isUtf8 } from 'node:buffer';

/**
 * The character encoding of the chat export (docs/import.md, "The input"): UTF-8 unless the run
 * names another WHATWG encoding label, decoded strictly, so bytes that are not valid in the
 * encoding fail the run instead of turning into U+FFFD without a word.
 */
export const DEFAULT_ENCODING = 'utf-8';

/** How a run names its source's encoding, as errors that suspect another encoding tell it. */
export const ENCODING_OPTION = '--encoding (command line) or "encoding" (event)';

/**
 * The canonical name of a WHATWG encoding label (`latin1` → `windows-1252`, `UTF8` → `utf-8`), or
 * undefined when Node's TextDecoder does not know it (or it is the "replacement" encoding, which
 * decodes nothing).
 */
export const resolveEncoding = (label: string): string | undefined => {
  try {
    return new TextDecoder(label.trim()).encoding;
  } catch {
    return undefined;
  }
};

/** Bytes a UTF-8 sequence takes, by its first byte; 0 for a byte that cannot start one. */
const sequenceLength = (lead: number): number => {
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
};

/** The range the byte after `lead` must fall in (WHATWG UTF-8 decoder: no overlongs, surrogates or values past U+10FFFF). */
const secondByteOk = (lead: number, byte: number): boolean => {
  if (lead === 0xe0) return byte >= 0xa0 && byte <= 0xbf;
  if (lead === 0xed) return byte >= 0x80 && byte <= 0x9f;
  if (lead === 0xf0) return byte >= 0x90 && byte <= 0xbf;
  if (lead === 0xf4) return byte >= 0x80 && byte <= 0x8f;
  return byte >= 0x80 && byte <= 0xbf;
};

/**
 * Index of the first byte of the first ill-formed UTF-8 sequence in `bytes[from…]`, or -1. A
 * sequence cut off by the end of `bytes` is ill-formed only when `final` (no more bytes follow).
 */
const firstInvalidUtf8 = (bytes: Uint8Array, from: number, final: boolean): number => {
  let at = from;
  while (at < bytes.length) {
    const lead = bytes[at]!;
    const length = sequenceLength(lead);
    if (length === 1) {
      at += 1;
      continue;
    }
    if (length === 0) return at;
    for (let index = 1; index < length; index += 1) {
      if (at + index >= bytes.length) return final ? at : -1;
      const byte = bytes[at + index]!;
      if (index === 1 ? !secondByteOk(lead, byte) : byte < 0x80 || byte > 0xbf) return at;
    }
    at += length;
  }
  return -1;
};

/** How many bytes at the end of `bytes` start a UTF-8 sequence that is not complete yet (0–3). */
const incompleteUtf8Tail = (bytes: Uint8Array): number => {
  for (let back = 1; back <= 3 && back <= bytes.length; back += 1) {
    const byte = bytes[bytes.length - back]!;
    if (byte < 0x80) return 0;
    if (byte >= 0xc0) return sequenceLength(byte) > back ? back : 0;
  }
  return 0;
};

/** A strict streaming decoder: TextDecoder's `decode`, throwing on bytes the encoding does not allow. */
export interface StrictDecoder {
  decode(input?: Uint8Array, options?: { stream?: boolean }): string;
}

/**
 * UTF-8 decoded strictly a piece at a time, as a fatal TextDecoder does (a byte-order mark kept as
 * U+FEFF), but validated and decoded by Buffer's native UTF-8 routines: a streaming TextDecoder spends
 * more time checking each piece's end for an unfinished character than decoding it. The unfinished
 * character (at most 3 bytes) is carried into the next piece.
 */
const utf8Decoder = (): StrictDecoder => {
  let carried: Buffer | undefined;
  return {
    decode(input?: Uint8Array, options?: { stream?: boolean }): string {
      const piece = input === undefined ? Buffer.alloc(0) : Buffer.from(input.buffer, input.byteOffset, input.byteLength);
      const bytes = carried === undefined ? piece : Buffer.concat([carried, piece]);
      const tail = options?.stream === true ? incompleteUtf8Tail(bytes) : 0;
      const complete = bytes.subarray(0, bytes.length - tail);
      if (!isUtf8(complete)) throw new TypeError('The encoded data was not valid for encoding utf-8');
      carried = tail === 0 ? undefined : Buffer.from(bytes.subarray(bytes.length - tail));
      return complete.toString('utf8');
    },
  };
};

/** The strict decoder for a resolved encoding name (resolveEncoding). */
export const strictDecoder = (encoding: string): StrictDecoder =>
  encoding === DEFAULT_ENCODING ? utf8Decoder() : new TextDecoder(encoding, { fatal: true, ignoreBOM: true });

/**
 * Where a strict decoder of `encoding`, having accepted everything before `current`, failed in it:
 * the absolute byte offset (from 0) of the offending bytes. `previous` is the piece decoded just
 * before (a UTF-8 character may start there), `currentOffset` where `current` starts in the file.
 * For UTF-8 this is the first byte of the ill-formed sequence; for other encodings the byte at
 * which a fresh decoder stops.
 */
export const locateInvalidBytes = (
  encoding: string,
  previous: Uint8Array | undefined,
  current: Uint8Array,
  currentOffset: number,
  final: boolean,
): number => {
  if (encoding === DEFAULT_ENCODING) {
    const carried = previous === undefined ? 0 : incompleteUtf8Tail(previous);
    const joined = carried === 0 ? current : Buffer.concat([previous!.subarray(previous!.length - carried), current]);
    const found = firstInvalidUtf8(joined, 0, final);
    // Never -1 in practice (the decoder refused these bytes); the piece's start is the safe answer.
    return found < 0 ? currentOffset : currentOffset - carried + found;
  }
  // A UTF-16 code unit starts at an even offset: a fresh decoder must start on one.
  const skip = encoding.startsWith('utf-16') && currentOffset % 2 === 1 ? 1 : 0;
  const decoder = new TextDecoder(encoding, { fatal: true, ignoreBOM: true });
  for (let index = skip; index < current.length; index += 1) {
    try {
      decoder.decode(current.subarray(index, index + 1), { stream: !(final && index === current.length - 1) });
    } catch {
      return currentOffset + index;
    }
  }
  return currentOffset + current.length;
};
