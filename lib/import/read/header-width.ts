import { ImportInputError } from './import-input-error.ts';

/** The most columns a header may have: a wider one is refused before any row is read. */
export const MAX_COLUMNS = 1_000;

type Quoting = 'none' | 'quoted' | 'after-quote';

/**
 * Counts the header row's columns as its text arrives, before the parser sees it, so that a header
 * of millions of columns is never held whole: past `MAX_COLUMNS` the caller stops keeping text and
 * only the count goes on, to the header's end (the error names the count), or for at most
 * `maxChars` characters (the error names the count so far). Quotes are read as the parser reads
 * them: one opens a field only at its start, and a doubled one inside stays text.
 */
export class HeaderWidth {
  private columns = 1;
  private quoting: Quoting = 'none';
  private atFieldStart = true;
  private lineHasText = false;
  private chars = 0;
  private ended = false;
  private started = false;
  private readonly maxChars: number;

  constructor(maxChars: number) {
    this.maxChars = maxChars;
  }

  /** Whether the header row has ended (counting stops there). */
  get done(): boolean {
    return this.ended;
  }

  /** Whether the header is wider than allowed: its text need not be kept. */
  get tooWide(): boolean {
    return this.columns > MAX_COLUMNS;
  }

  /** Follows the next piece of text; throws once a header too wide has ended, or grew past `maxChars`. */
  follow(text: string): void {
    for (let index = 0; index < text.length && !this.ended; index += 1) this.step(text.charCodeAt(index));
    this.chars += text.length;
    if (this.tooWide && (this.ended || this.chars > this.maxChars)) throw this.error(!this.ended);
  }

  /** The input ended: a header too wide that ran to the end of the file is refused too. */
  end(): void {
    if (this.tooWide) throw this.error(false);
  }

  private step(code: number): void {
    // A byte order mark first in the file is no text of the header.
    if (!this.started) {
      this.started = true;
      if (code === 0xfeff) return;
    }
    if (this.quoting === 'quoted') {
      if (code === 0x22) this.quoting = 'after-quote';
      return;
    }
    if (this.quoting === 'after-quote') {
      this.quoting = 'none';
      // A doubled quote is a quote in the text; the field stays open.
      if (code === 0x22) {
        this.quoting = 'quoted';
        return;
      }
    }
    if (code === 0x0a) {
      // Blank lines before the header are skipped, as the reader skips them.
      if (this.lineHasText || this.columns > 1) this.ended = true;
      this.atFieldStart = true;
      return;
    }
    if (code === 0x2c) {
      this.columns += 1;
      this.lineHasText = true;
      this.atFieldStart = true;
      return;
    }
    if (code === 0x22 && this.atFieldStart) this.quoting = 'quoted';
    if (code !== 0x0d) this.lineHasText = true;
    this.atFieldStart = false;
  }

  private error(unfinished: boolean): ImportInputError {
    return new ImportInputError(
      unfinished
        ? `CSV header has more than ${this.columns} columns in its first ${this.chars} characters; an import reads at most ${MAX_COLUMNS}`
        : `CSV header has ${this.columns} columns; an import reads at most ${MAX_COLUMNS}`,
    );
  }
}
