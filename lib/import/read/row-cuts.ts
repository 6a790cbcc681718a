import { LineCounter } from './line-count.ts';

const QUOTE = 0x22;
const LF = 0x0a;
const CR = 0x0d;

const QUOTES = 0x22222222;

/** 1 when `bytes` holds an odd number of quotes, four bytes at a time (docs/architecture.md, "The import's threads"). */
const quoteParity = (bytes: Uint8Array): number => {
  let parity = 0;
  let at = 0;
  // Bytes before the first aligned word, the words, then the bytes after the last.
  const head = Math.min(bytes.length, (4 - (bytes.byteOffset & 3)) & 3);
  for (; at < head; at += 1) if (bytes[at] === QUOTE) parity ^= 1;
  const wordCount = (bytes.length - at) >>> 2;
  let folded = 0;
  if (wordCount > 0) {
    const words = new Uint32Array(bytes.buffer, bytes.byteOffset + at, wordCount);
    for (let index = 0; index < wordCount; index += 1) {
      const word = words[index]! ^ QUOTES;
      folded ^= ~(((word & 0x7f7f7f7f) + 0x7f7f7f7f) | word | 0x7f7f7f7f);
    }
  }
  for (at += wordCount * 4; at < bytes.length; at += 1) if (bytes[at] === QUOTE) parity ^= 1;
  folded &= 0x80808080;
  folded ^= folded >>> 16;
  folded ^= folded >>> 8;
  return parity ^ ((folded >>> 7) & 1);
};

/**
 * Follows a CSV's bytes from the start of the file to find places to cut it between rows, by quote
 * parity, counting their lines as it goes (docs/architecture.md, "The import's threads").
 */
export class RowCuts extends LineCounter {
  private insideQuotes = false;
  /** The last byte followed, for a CRLF split between two chunks. */
  private lastByte = -1;

  /** Follows `bytes` without looking for a cut; `line` is where a part cut next would start. */
  override follow(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    if (quoteParity(bytes) === 1) this.insideQuotes = !this.insideQuotes;
    super.follow(bytes);
    this.lastByte = bytes[bytes.length - 1]!;
  }

  /**
   * The index in `bytes` just past the first newline that ends a row by quote parity (with `newline`
   * CRLF, a line feed after a carriage return), having followed the bytes up to it; -1, having
   * followed all of them, when there is none.
   */
  cut(bytes: Uint8Array, newline: '\n' | '\r\n'): number {
    let at = 0;
    for (let lf = bytes.indexOf(LF); lf !== -1; lf = bytes.indexOf(LF, at)) {
      // Only the line's own bytes: a search past it would make a long run of lines inside quotes
      // (after a stray quote, say) cost lines × window.
      if (quoteParity(bytes.subarray(at, lf)) === 1) this.insideQuotes = !this.insideQuotes;
      this.lineFeeds += 1;
      at = lf + 1;
      const before = lf > 0 ? bytes[lf - 1]! : this.lastByte;
      if (!this.insideQuotes && (newline === '\n' || before === CR)) {
        this.lastByte = LF;
        return at;
      }
    }
    this.follow(bytes.subarray(at));
    if (bytes.length > 0) this.lastByte = bytes[bytes.length - 1]!;
    return -1;
  }
}

/** Single-byte encodings (WHATWG): every byte one character, a quote and a line feed as in ASCII. */
const SINGLE_BYTE = /^(?:ibm866|iso-8859-\d+|koi8-[ru]|macintosh|windows-874|windows-125\d|x-mac-cyrillic)$/;

/** Whether a source in `encoding` (a WHATWG name) can be cut by its bytes (see RowCuts). */
export const cutsApplyTo = (encoding: string): boolean => encoding === 'utf-8' || SINGLE_BYTE.test(encoding);
