import { rmSync } from 'node:fs';

/**
 * Temporary files and directories that must not outlive the process: removed by their owners when
 * they are done, and otherwise on `process.exit` (the import's second Ctrl-C exits at once, before
 * the owners' own clean-up ran). Exit handlers must be synchronous.
 */
const paths = new Set<string>();

const removeAll = (): void => {
  for (const path of paths) rmSync(path, { recursive: true, force: true });
};

/** Removes `path` at exit unless the returned function was called first (its owner removed it). */
export const removeAtExit = (path: string): (() => void) => {
  if (paths.size === 0) process.once('exit', removeAll);
  paths.add(path);
  return () => {
    paths.delete(path);
    if (paths.size === 0) process.removeListener('exit', removeAll);
  };
};
