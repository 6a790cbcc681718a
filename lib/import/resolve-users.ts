import { int64Halves, Int64Set, ownedCopy } from './int64-set.ts';
import { canonicalInt64 } from '../values/int64.ts';

/**
 * User ids and references (docs/import.md). A user's id is the destination's id for its email
 * (case-insensitive) where the destination holds one, else its AUTHOR_ID. Where the id came from the
 * destination, references to that AUTHOR_ID (comment `author_id`, ticket `requester_id`) follow it —
 * and the FIRST winning user row of an AUTHOR_ID decides: if that first user was not matched, a later
 * user of the same author does not remap anything.
 *
 * The id of a user row depends on that row alone (destinationUserId, where the row is judged); the
 * decisions depend on which rows win, in order (UserResolver, where rows are taken); references are
 * remapped when the batches are written, because a later user row can remap earlier comments.
 */

import type { DestinationUsers } from '../ticketing/user-listing-client.ts';

/** The destination's users (the listing's, lib/ticketing); undefined = resolution disabled. */
export type { DestinationUsers };

/** The destination's id for an email (by its key, email-key.ts) as canonical decimal text, or null where it holds none. */
export const destinationUserId = (users: DestinationUsers | undefined, key: string): string | null => {
  if (users === undefined) return null;
  const raw = users.get(key);
  if (raw === undefined) return null;
  // Written as a bare JSON integer: anything else would corrupt the archive, so refuse it loudly.
  const id = canonicalInt64(raw);
  if (id === null) throw new TypeError('A destination user id is not a 64-bit integer');
  return id;
};

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
