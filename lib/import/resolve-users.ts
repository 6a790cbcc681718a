import { ownedCopy } from './int64-set.ts';
import { canonicalInt64 } from '../int64.ts';

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

/** Lower-cased email → the destination's user id (exact decimal text); undefined = resolution disabled. */
export type DestinationUsers = ReadonlyMap<string, string>;

/** The destination's id for `email` as canonical decimal text, or null where it holds none. */
export const destinationUserId = (users: DestinationUsers | undefined, email: string): string | null => {
  if (users === undefined) return null;
  const raw = users.get(email.toLowerCase());
  if (raw === undefined) return null;
  // Written as a bare JSON integer: anything else would corrupt the archive, so refuse it loudly.
  const id = canonicalInt64(raw);
  if (id === null) throw new TypeError('A destination user id is not a 64-bit integer');
  return id;
};

export class UserResolver {
  matched = 0;
  readonly enabled: boolean;
  /** AUTHOR_ID → destination id, or null when its first user kept the AUTHOR_ID. */
  private readonly decided = new Map<string, string | null>();
  /** How many authors are remapped: none (the usual case without a destination) skips the lookups. */
  private remapped = 0;

  constructor(enabled: boolean) {
    this.enabled = enabled;
  }

  /** Call for each winning user row, in order: its AUTHOR_ID (if any) and the destination's id (if any). */
  take(authorId: string | null, destinationId: string | null): void {
    if (destinationId !== null) this.matched += 1;
    // Without an AUTHOR_ID a user is complete only through its destination id, and decides no reference.
    if (authorId === null || this.decided.has(authorId)) return;
    this.decided.set(ownedCopy(authorId), destinationId);
    if (destinationId !== null) this.remapped += 1;
  }

  /** Whether any reference is written with another id than the one spilled. */
  get remapsAny(): boolean {
    return this.remapped > 0;
  }

  /** The id a reference to `authorId` is written with. */
  remap(authorId: string): string {
    if (this.remapped === 0) return authorId;
    return this.decided.get(authorId) ?? authorId;
  }
}
