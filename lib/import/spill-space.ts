import { statfs } from 'node:fs/promises';
import { JobError } from '../errors.ts';

/**
 * Spill bytes per source byte (docs/import.md, "Sizes"), measured with `npm run bench -- import` on
 * an export whose every row is a new ticket, comment and user (the most a row can spill: 1.43): each
 * row's cells come back as three JSON records with their keys, escapes and record headers. Exports
 * with repeated tickets and users (the usual case) spill less; bodies made of control characters
 * (each escaped as six bytes) could spill more, which the disk then refuses mid-run with its own error.
 */
export const SPILL_BYTES_PER_SOURCE_BYTE = 1.45;

/** The source is too large for the temporary directory's free space. */
export class SpillSpaceError extends JobError {}

const GB = 1e9;
const gb = (bytes: number): string => `${(bytes / GB).toFixed(1)} GB`;

/**
 * Fails at once, before hours of work, when a source of `sourceBytes` would spill more than the
 * free space of `tmpDir` (Lambda: 10 GB of /tmp at most); a source of unknown size (a pipe) passes.
 */
export const checkSpillSpace = async (sourceBytes: number | undefined, tmpDir: string): Promise<void> => {
  if (sourceBytes === undefined) return;
  const needed = sourceBytes * SPILL_BYTES_PER_SOURCE_BYTE;
  const disk = await statfs(tmpDir);
  const free = disk.bavail * disk.bsize;
  if (needed > free) {
    throw new SpillSpaceError(
      `Source is ${gb(sourceBytes)}: its spill files need about ${gb(needed)} in ${tmpDir} ` +
        `(${SPILL_BYTES_PER_SOURCE_BYTE} bytes per source byte) but only ${gb(free)} are free; split the export, or run it where the temporary directory has room`,
    );
  }
};
