import { int64Halves } from '../../lib/import/formats/row-keys.ts';
import { AssetDeduper } from '../../lib/import/take/asset-deduper.ts';
import { UserResolver } from '../../lib/import/take/resolve-users.ts';

export interface KeyCounts {
  tickets: number;
  comments: number;
  users: number;
}

/**
 * The dedupe state of a run that took these many distinct tickets, comments and users, built with the
 * import's own classes: ids in the generated export's ranges, emails of 36 characters as its own,
 * each user with an AUTHOR_ID of its own. `withDestination`: imported with a destination that holds
 * none of them, so every AUTHOR_ID decision is kept. Throws should any key repeat.
 */
export const buildDedupeKeys = (counts: KeyCounts, withDestination: boolean): { deduper: AssetDeduper; resolver: UserResolver } => {
  const deduper = new AssetDeduper();
  const resolver = new UserResolver(withDestination);
  const halves = new Int32Array(2);
  for (let n = 0; n < counts.tickets; n += 1) {
    int64Halves(String(9_100_000_000 + n), halves);
    deduper.takeTicket(halves[0]!, halves[1]!);
  }
  for (let n = 0; n < counts.comments; n += 1) {
    int64Halves(String(42_000_000_000 + n), halves);
    deduper.takeComment(halves[0]!, halves[1]!);
  }
  for (let n = 0; n < counts.users; n += 1) {
    deduper.takeUser(`hana.oneil.${String(n).padStart(8, '0')}@mail.example.com`);
    resolver.take(String(7_000_000_000_000_000_000n + BigInt(n)), null);
  }
  const { dropped } = deduper;
  if ([dropped.tickets, dropped.comments, dropped.users].some((counts) => counts.duplicate !== 0) || resolver.remapsAny) {
    throw new Error('unexpected duplicates');
  }
  return { deduper, resolver };
};
