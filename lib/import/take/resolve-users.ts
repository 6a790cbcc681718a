import { int64Halves, ownedCopy } from '../formats/row-keys.ts';
import { Int64Set } from './int64-set.ts';

// User ids and references: the first winning user row of an AUTHOR_ID decides (docs/architecture.md, "Keys and users").

/**
 * The decisions, as rows are taken. Without a destination nothing is ever remapped, so nothing is
 * kept; with one, the decided AUTHOR_IDs are kept as numbers (an Int64Set, 8 bytes a slot, off the
 * JavaScript heap) and only the remapped ones as text.
 */
export class UserResolver {
  matched = 0;
  /** Every AUTHOR_ID a winning user decided, remapped or not (int64Halves); none without a destination. */
  private readonly decided: Int64Set | undefined;
  /** AUTHOR_ID → destination id, for the AUTHOR_IDs whose first winning user had one. */
  private readonly remapped = new Map<string, string>();
  private readonly halves = new Int32Array(2);

  constructor(enabled: boolean) {
    this.decided = enabled ? new Int64Set() : undefined;
  }

  /** Whether ids are resolved against a destination. */
  get enabled(): boolean {
    return this.decided !== undefined;
  }

  /**
   * Call for each winning user row, in order: its AUTHOR_ID (canonical, as parseInt64 gives it) if
   * any, and the destination's id if any.
   */
  take(authorId: string | null, destinationId: string | null): void {
    if (destinationId !== null) this.matched += 1;
    // Without an AUTHOR_ID a user is complete only through its destination id, and decides no reference.
    if (this.decided === undefined || authorId === null) return;
    int64Halves(authorId, this.halves);
    if (!this.decided.addHalves(this.halves[0]!, this.halves[1]!)) return;
    if (destinationId !== null) this.remapped.set(ownedCopy(authorId), destinationId);
  }

  /** Whether any reference is written with another id than the one spilled. */
  get remapsAny(): boolean {
    return this.remapped.size > 0;
  }

  /** The id a reference to `authorId` is written with. */
  remap(authorId: string): string {
    return this.remapped.get(authorId) ?? authorId;
  }
}
