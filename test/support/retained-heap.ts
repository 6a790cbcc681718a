import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

const MB = 1024 * 1024;

/** V8's `gc()`, made available at run time (a context created after the flag is set gets it). */
export const collectGarbage = (): (() => void) => {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
};

/** The JavaScript heap in use after a full collection. */
const heapAfterCollection = (gc: () => void): number => {
  gc();
  return process.memoryUsage().heapUsed;
};

/**
 * How many MB of heap stay in use, after a full collection, while the values `keep` returns are
 * held: for checking that short strings cut from large ones do not pin their parents. `keep` gets
 * `parent(n)`, which builds the n-th of a series of distinct 1 MB strings.
 */
export const retainedMb = (keep: (parent: (n: number) => string) => unknown): number => {
  const gc = collectGarbage();
  const before = heapAfterCollection(gc);
  const kept = keep((n) => `${String(n).padStart(8, '0')}@example.com,${'x'.repeat(MB)}`);
  const retained = heapAfterCollection(gc) - before;
  // Held until here, so the collection above could not free them.
  if (kept === undefined) throw new Error('keep returned nothing to hold');
  return retained / MB;
};
