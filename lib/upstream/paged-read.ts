import { runBounded } from '../async/bounded-pool.ts';

/**
 * The paged read both upstream clients share (Jamf Pro's inventories, the ticketing destination's
 * user listing), for lists paged by offset: a record removed while a read runs moves every later
 * record one place forward, so a page served after the removal skips the one that crossed its start.
 * A read that saw its list shrink is therefore thrown away and the list read again.
 */
export type PagedRead<T> = { kind: 'whole'; value: T } | { kind: 'shrank'; detail: string };

/**
 * `readOnce` until a read is whole, `reads` reads at most; past them `gaveUp` makes the error, from the
 * last read's account of how the list shrank.
 */
export const readWhileShrinking = async <T>(
  reads: number,
  readOnce: () => Promise<PagedRead<T>>,
  gaveUp: (detail: string, reads: number) => Error,
): Promise<T> => {
  let detail = '';
  for (let read = 1; read <= reads; read += 1) {
    const outcome = await readOnce();
    if (outcome.kind === 'whole') return outcome.value;
    detail = outcome.detail;
  }
  throw gaveUp(detail, reads);
};

export interface PageFetch<P> {
  /** The pages to read, in the order to start them. */
  indexes: readonly number[];
  concurrency: number;
  signal: AbortSignal;
  /** Aborted by the first failure (its signal within `signal`): the whole read stops, not only its pages. */
  abort?: AbortController;
  fetch: (index: number, signal: AbortSignal) => Promise<P>;
  /**
   * Each page as it arrives (its records can be mapped and let go at once); `shrank` when it shows
   * the list shrank: the pages in flight are cancelled and no other starts.
   */
  take: (index: number, page: P) => 'taken' | 'shrank';
}

/**
 * Pages of one read, at most `concurrency` in flight. The first failure cancels the others and
 * rejects; once the read is known to have shrunk, what the cancelled pages do no longer matters.
 */
export const fetchPages = async <P>(spec: PageFetch<P>): Promise<'whole' | 'shrank'> => {
  const stop = new AbortController();
  const signal = AbortSignal.any([spec.signal, stop.signal]);
  let shrank = false;
  const tasks = spec.indexes.map((index) => async () => {
    if (shrank) return;
    let page: P;
    try {
      page = await spec.fetch(index, signal);
    } catch (error) {
      if (shrank) return;
      throw error;
    }
    if (spec.take(index, page) === 'shrank' && !shrank) {
      shrank = true;
      stop.abort();
    }
  });
  await runBounded(tasks, spec.concurrency, spec.abort ?? stop);
  return shrank ? 'shrank' : 'whole';
};
