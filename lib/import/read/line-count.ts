/** How many line feeds `text` (decoded, or its bytes) holds (a CRLF file's lines end in one too). */
export const countLineFeeds = (text: string | Uint8Array): number => {
  const next = typeof text === 'string' ? (at: number) => text.indexOf('\n', at) : (at: number) => text.indexOf(0x0a, at);
  let count = 0;
  for (let at = next(0); at !== -1; at = next(at + 1)) count += 1;
  return count;
};

/** The line a reading has reached, followed a piece at a time (text or bytes): the CSV reader's, the row cuts'. */
export class LineCounter {
  /** Line feeds followed so far (from the file's first line). */
  lineFeeds: number;

  /** Starts on `line` (from 1). */
  constructor(line = 1) {
    this.lineFeeds = line - 1;
  }

  /** Follows `text`, counting its line feeds. */
  follow(text: string | Uint8Array): void {
    this.lineFeeds += countLineFeeds(text);
  }

  /** The line the next character is on (from 1). */
  get line(): number {
    return this.lineFeeds + 1;
  }
}
