import type { UserRow } from './asset-rules.ts';
import { ownedCopy } from './int64-set.ts';
import { canonicalInt64 } from '../int64.ts';

/** A winning user with its final id. */
export interface ResolvedUser {
  id: string;
  name: string;
  email: string;
}

/**
 * User ids and references (docs/import.md). A user's id is the destination's id for its email
 * (case-insensitive) where the destination holds one, else its AUTHOR_ID. Where the id came from the
 * destination, references to that AUTHOR_ID (comment `author_id`, ticket `requester_id`) follow it —
 * and the FIRST winning user row of an AUTHOR_ID decides: if that first user was not matched, a later
 * user of the same author does not remap anything.
 *
 * Users are resolved as they win, during the single pass over the CSV; references are remapped when
 * the batches are written, because a later user row can remap earlier comments.
 */
export class UserResolver {
  matched = 0;
  private readonly destinationUsers: ReadonlyMap<string, string> | undefined;
  /** AUTHOR_ID → destination id, or null when its first user kept the AUTHOR_ID. */
  private readonly decided = new Map<string, string | null>();
  /** How many authors are remapped: none (the usual case without a destination) skips the lookups. */
  private remapped = 0;

  constructor(destinationUsers: ReadonlyMap<string, string> | undefined) {
    this.destinationUsers = destinationUsers;
  }

  get enabled(): boolean {
    return this.destinationUsers !== undefined;
  }

  /** Whether the destination holds `lowerCaseEmail` (what makes a user row without AUTHOR_ID complete). */
  readonly holds = (lowerCaseEmail: string): boolean => this.destinationUsers?.has(lowerCaseEmail) ?? false;

  /** Call for each winning user row, in order. */
  resolve(user: UserRow): ResolvedUser {
    const destinationId = this.destinationIdFor(user.email);
    if (user.author_id === null) {
      // Complete only through its destination id; with no AUTHOR_ID it decides no reference.
      if (destinationId === null) throw new TypeError('A user row without AUTHOR_ID must be held by the destination');
      this.matched += 1;
      return { id: destinationId, name: user.name, email: user.email };
    }
    if (!this.decided.has(user.author_id)) {
      this.decided.set(ownedCopy(user.author_id), destinationId);
      if (destinationId !== null) this.remapped += 1;
    }
    if (destinationId === null) return { id: user.author_id, name: user.name, email: user.email };
    this.matched += 1;
    return { id: destinationId, name: user.name, email: user.email };
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

  private destinationIdFor(email: string): string | null {
    if (this.destinationUsers === undefined) return null;
    const raw = this.destinationUsers.get(email.toLowerCase());
    if (raw === undefined) return null;
    // Written as a bare JSON integer: anything else would corrupt the archive, so refuse it loudly.
    const id = canonicalInt64(raw);
    if (id === null) throw new TypeError('A destination user id is not a 64-bit integer');
    return id;
  }
}
