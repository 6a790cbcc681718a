import { copyFile, mkdtemp, readdir, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * serverless-esbuild writes its bundles to `<service dir>/.esbuild` and `osls package` deletes that
 * folder when it is done. Running the offline stack from a private directory of symlinks to the
 * project gives every stack its own build folder, so two stacks (or a stack and a packaging run)
 * never overwrite or delete each other's bundles.
 */
// Build output of other runs, and what no bundle imports: the bundler's file watcher (live reload)
// then ignores edits to tests, benchmarks and sample events.
const NOT_LINKED = new Set(['.git', '.esbuild', '.serverless', '.serverless-offline', '.build', 'dist', 'coverage', 'test', 'bench', 'events']);
/** The framework only recognises a service directory whose descriptor is a regular file. */
const COPIED = new Set(['serverless.yml']);

export interface ShadowService {
  dir: string;
  remove: () => Promise<void>;
}

export const createShadowService = async (projectRoot: string, label: string): Promise<ShadowService> => {
  const dir = await mkdtemp(join(tmpdir(), `${label}-`));
  const entries = await readdir(projectRoot);
  await Promise.all(
    entries
      .filter((name) => !NOT_LINKED.has(name))
      .map((name) => (COPIED.has(name) ? copyFile : symlink)(join(projectRoot, name), join(dir, name))),
  );
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
};
