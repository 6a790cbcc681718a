import { availableParallelism, tmpdir } from 'node:os';
import { cutsApplyTo } from '../read/row-cuts.ts';
import { DEFAULT_ENCODING } from '../read/source-encoding.ts';

/** What a run was asked about its threads, its temporary directory and its encoding; planRun decides what is left unsaid. */
export interface RunAsk {
  /**
   * Read in worker threads: `true` in any case, `'by-cores'` where the machine has a second core to
   * run them (on one core a second thread would only take turns with the first); absent or false: in
   * this thread, unless `readThreads` says how many.
   */
  worker?: boolean | 'by-cores' | undefined;
  /** Read in this thread whatever else is asked. */
  singleThread?: boolean | undefined;
  /** Read in this many worker threads. */
  readThreads?: number | undefined;
  /** Where the spill files go. */
  tmpDir?: string | undefined;
  /** The source's WHATWG encoding name (resolved from a label by source-encoding.ts). */
  encoding?: string | undefined;
}

/** How one run goes, decided once (planRun) and passed down: nothing below the plan picks a default of its own. */
export interface RunPlan {
  /** Worker threads that read the source; 0: it is read in this thread. */
  readThreads: number;
  tmpDir: string;
  /** The whole run without the archive: no spill files, no archive. */
  dryRun: boolean;
  encoding: string;
}

/**
 * Reading threads by default: one per core beside this one's, at least one and at most three
 * (docs/architecture.md, "The import's threads").
 */
const defaultReadThreads = (cores: number): number => Math.min(3, Math.max(1, cores - 1));

/** The plan of a run from what it was asked and the machine it runs on. */
export const planRun = (ask: RunAsk, dryRun: boolean): RunPlan => {
  const encoding = ask.encoding ?? DEFAULT_ENCODING;
  const cores = availableParallelism();
  let readThreads = 0;
  if (ask.singleThread === true) readThreads = 0;
  else if (ask.readThreads !== undefined) readThreads = Math.max(1, ask.readThreads);
  else if (ask.worker === true || (ask.worker === 'by-cores' && cores > 1)) readThreads = defaultReadThreads(cores);
  // Cutting the source between rows needs bytes that are the quotes and line feeds they look like: a
  // source that cannot be cut is read by one thread, the others would only wait.
  if (readThreads > 1 && !cutsApplyTo(encoding)) readThreads = 1;
  return { readThreads, tmpDir: ask.tmpDir ?? tmpdir(), dryRun, encoding };
};
