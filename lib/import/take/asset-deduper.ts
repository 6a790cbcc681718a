import type { Asset, DropReason, FaultReason } from '../formats/assets.ts';
import { Int64Set } from './int64-set.ts';
import { TextSet } from './text-set.ts';

export type DropCounts = Record<string, number>;

const zeroCounts = (reasons: readonly string[]): DropCounts => Object.fromEntries(reasons.map((reason) => [reason, 0]));

const TICKET_DROP_REASONS = ['missing_field', 'invalid_field', 'duplicate'] as const;
const COMMENT_DROP_REASONS = ['missing_field', 'invalid_field', 'duplicate'] as const;
const USER_DROP_REASONS = ['missing_field', 'bad_email', 'invalid_field', 'duplicate'] as const;

/**
 * "First complete row per key wins" for the three assets, row after row in file order. Holds only
 * the keys seen (ids in compact Int64Sets, email keys (email-key.ts) as bytes in a TextSet, both off the
 * JavaScript heap) and the drop counts: the winning records go straight to the caller, who spills
 * them, so memory grows with distinct keys only.
 */
export class AssetDeduper {
  readonly dropped = {
    tickets: zeroCounts(TICKET_DROP_REASONS),
    comments: zeroCounts(COMMENT_DROP_REASONS),
    users: zeroCounts(USER_DROP_REASONS),
  };
  private readonly ticketIds = new Int64Set();
  private readonly commentIds = new Int64Set();
  private readonly userEmails = new TextSet();

  /** A complete ticket keyed by its id's halves (int64Halves): true when it wins; a duplicate is counted. */
  takeTicket(high: number, low: number): boolean {
    return this.ticketIds.addHalves(high, low) || this.drop('tickets', 'duplicate');
  }

  takeComment(high: number, low: number): boolean {
    return this.commentIds.addHalves(high, low) || this.drop('comments', 'duplicate');
  }

  /** A complete user by its email key (email-key.ts: users compare emails case-insensitively). */
  takeUser(key: string): boolean {
    return this.userEmails.add(key) || this.drop('users', 'duplicate');
  }

  /** Counts a candidate of `asset` whose key certainly won before (recent-keys.ts) as a duplicate. */
  repeat(asset: Asset): void {
    this.drop(asset, 'duplicate');
  }

  /** Counts an incomplete row of `asset` under its fault's reason. */
  refuse(asset: Asset, reason: FaultReason): void {
    this.drop(asset, reason);
  }

  private drop(asset: Asset, reason: DropReason): false {
    const counts = this.dropped[asset];
    counts[reason] = (counts[reason] ?? 0) + 1;
    return false;
  }
}
