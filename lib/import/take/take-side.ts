import type { Asset } from '../formats/assets.ts';
import { visitVerdicts, type VerdictBatch, type VerdictVisitor } from '../formats/verdict-batch.ts';
import { recordIdText } from '../formats/spill-record.ts';
import { AssetDeduper } from './asset-deduper.ts';
import type { RejectedAsset, RejectsWriter } from './rejects-file.ts';
import { UserResolver } from './resolve-users.ts';
import type { SpillWriter } from './spill-writer.ts';

/** One of a thing per asset (the spill files, their paths). */
export interface PerAsset<T> {
  tickets: T;
  comments: T;
  users: T;
}

const REJECTED: Record<Asset, RejectedAsset> = { tickets: 'ticket', comments: 'comment', users: 'user' };

/**
 * Pass 1's take side: the read side's batches taken in file order, deciding which complete records
 * win (AssetDeduper, UserResolver), copying the winners into their spills and writing the rejects.
 */
export class TakeSide {
  readonly counts = { rows: 0, tickets: 0, comments: 0, users: 0 };
  readonly deduper = new AssetDeduper();
  readonly resolver: UserResolver;
  private readonly spills: PerAsset<SpillWriter> | undefined;
  private readonly rejects: RejectsWriter | undefined;
  private readonly visitor: VerdictVisitor;

  /** `spills` absent: a dry run, which spills nothing. `resolving`: user ids are resolved against a destination. */
  constructor(spills: PerAsset<SpillWriter> | undefined, rejects: RejectsWriter | undefined, resolving: boolean) {
    this.spills = spills;
    this.rejects = rejects;
    const resolver = (this.resolver = new UserResolver(resolving));
    const { counts, deduper } = this;
    let row = 0;
    let line = 0;
    this.visitor = {
      row: (number, startLine) => {
        row = number;
        line = startLine;
      },
      idCandidate: (asset, high, low, records, start, end) => {
        if (asset === 'tickets' ? deduper.takeTicket(high, low) : deduper.takeComment(high, low)) {
          spills?.[asset].append(records, start, end);
          counts[asset] += 1;
        } else if (rejects !== undefined) {
          const key = Buffer.from(recordIdText(records, start), 'latin1');
          rejects.add({ row, line, asset: REJECTED[asset], reason: 'duplicate', column: '', data: key, start: 0, end: key.length });
        }
      },
      userCandidate: (emailKey, authorId, destinationId, records, start, end) => {
        if (deduper.takeUser(emailKey)) {
          resolver.take(authorId, destinationId);
          spills?.users.append(records, start, end);
          counts.users += 1;
        } else if (rejects !== undefined) {
          const key = Buffer.from(emailKey);
          rejects.add({ row, line, asset: 'user', reason: 'duplicate', column: '', data: key, start: 0, end: key.length });
        }
      },
      repeat: (asset, key, start, end) => {
        deduper.repeat(asset);
        rejects?.add({ row, line, asset: REJECTED[asset], reason: 'duplicate', column: '', data: key, start, end });
      },
      fault: (asset, reason, column, verdicts, start, end) => {
        deduper.refuse(asset, reason);
        rejects?.add({ row, line, asset: REJECTED[asset], reason, column, data: verdicts, start, end });
      },
    };
  }

  /** Takes a batch's rows, in file order. */
  take(batch: VerdictBatch): void {
    visitVerdicts(batch, this.visitor);
    this.counts.rows += batch.rows;
  }

  /** Bytes spilled so far. */
  get spilledBytes(): number {
    const spills = this.spills;
    return spills === undefined ? 0 : spills.tickets.bytes + spills.comments.bytes + spills.users.bytes;
  }

  /** Writes what the spills and the rejects hold, waiting while their outputs are behind: awaited once per batch. */
  async flush(): Promise<void> {
    const spills = this.spills;
    await Promise.all([spills?.tickets.flush(), spills?.comments.flush(), spills?.users.flush(), this.rejects?.flush()]);
  }
}
