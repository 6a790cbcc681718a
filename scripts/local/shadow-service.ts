import { mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { removeAtExit } from '../../lib/runtime/remove-at-exit.ts';

/**
 * serverless-esbuild writes its bundles to `<service dir>/.esbuild` and `osls package` deletes that
 * folder when it is done. Running the offline stack from a private directory of symlinks to the
 * project gives every stack its own build folder, so two stacks (or a stack and a packaging run)
 * never overwrite or delete each other's bundles.
 */
// Build output of other runs, and what no bundle imports: the bundler's file watcher (live reload)
// then ignores edits to tests, benchmarks and sample events.
const NOT_LINKED = new Set([
  '.git',
  '.esbuild',
  '.serverless',
  '.serverless-offline',
  '.build',
  'dist',
  'coverage',
  'test',
  'bench',
  'events',
]);
/** The framework only recognises a service directory whose descriptor is a regular file: it is written, not linked. */
const DESCRIPTOR = 'serverless.yml';

export interface ShadowService {
  dir: string;
  remove: () => Promise<void>;
}

/**
 * A private folder (mkdtemp: only its owner may enter) of links to the project, with `descriptor` as
 * its serverless.yml: the template with this stack's parameter values (offline-params.ts), which
 * may hold a credential, so the file is its owner's alone too. It goes with `remove()`, or at the
 * latest when the process exits (a stop forced after its time limit, a crash, a signal while this
 * is still being made); only SIGKILL leaves it behind.
 */
export const createShadowService = async (projectRoot: string, label: string, descriptor: string): Promise<ShadowService> => {
  const dir = await mkdtemp(join(tmpdir(), `${label}-`));
  const forget = removeAtExit(dir);
  const remove = async (): Promise<void> => {
    await rm(dir, { recursive: true, force: true });
    forget();
  };
  try {
    const entries = (await readdir(projectRoot)).filter((name) => !NOT_LINKED.has(name) && name !== DESCRIPTOR);
    // All settled before the folder goes, so a failed clean-up cannot hide which link failed.
    const linked = await Promise.allSettled(entries.map((name) => symlink(join(projectRoot, name), join(dir, name))));
    const failed = linked.find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
    await writeFile(join(dir, DESCRIPTOR), descriptor, { mode: 0o600 });
  } catch (error) {
    await remove().catch(() => undefined);
    throw error;
  }
  return { dir, remove };
};
