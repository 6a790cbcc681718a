import { statfs } from 'node:fs/promises';
import { JobError } from '../../errors.ts';

/** Spill bytes per source byte of an all-new export, measured and rounded up (docs/architecture.md, "The spill's room"). */
const SPILL_BYTES_PER_SOURCE_BYTE = 1.45;

/**
 * The projection starts once this much of the source was read, or a hundredth of it if that is more:
 * enough rows to speak for the rest, a second or two into a run.
 */
const SAMPLE_BYTES = 32 * 1024 * 1024;

/** The source is too large for the temporary directory's free space. */
class SpillSpaceError extends JobError {}

/** Decimal units, as disks are sold: GB with one decimal, MB below a GB. */
const size = (bytes: number): string => (bytes >= 1e9 ? `${(bytes / 1e9).toFixed(1)} GB` : `${Math.round(bytes / 1e6)} MB`);
const advice = 'split the export, or run it where the temporary directory has room';

/** What the spill may take: the temporary directory's free space when the run started. */
export interface SpillRoom {
  tmpDir: string;
  freeBytes: number;
  /** The source's size where it is known (a file, an S3 object; not a pipe). */
  sourceBytes: number | undefined;
}

/**
 * Fails at once, before any output, when a source of `sourceBytes` would spill more than the free
 * space of `tmpDir` (Lambda: 10 GB of /tmp at most) at the estimated SPILL_BYTES_PER_SOURCE_BYTE; a
 * source of unknown size (a pipe) passes. Returns the room for makeSpillWatch.
 */
export const checkSpillSpace = async (sourceBytes: number | undefined, tmpDir: string): Promise<SpillRoom> => {
  const disk = await statfs(tmpDir);
  const freeBytes = disk.bavail * disk.bsize;
  if (sourceBytes !== undefined && sourceBytes * SPILL_BYTES_PER_SOURCE_BYTE > freeBytes) {
    throw new SpillSpaceError(
      `Source is ${size(sourceBytes)}: its spill files need about ${size(sourceBytes * SPILL_BYTES_PER_SOURCE_BYTE)} in ${tmpDir} ` +
        `(${SPILL_BYTES_PER_SOURCE_BYTE} bytes per source byte) but only ${size(freeBytes)} are free; ${advice}`,
    );
  }
  return { tmpDir, freeBytes, sourceBytes };
};

/** Fails the run early once the spill, so far or projected, outgrows its room (docs/architecture.md, "The spill's room"). */
export const makeSpillWatch = (room: SpillRoom) => {
  const { tmpDir, freeBytes, sourceBytes } = room;
  const sampleBytes =
    sourceBytes === undefined ? Number.POSITIVE_INFINITY : Math.min(sourceBytes, Math.max(SAMPLE_BYTES, sourceBytes / 100));
  return (bytesRead: number, spilledBytes: number): void => {
    if (spilledBytes > freeBytes) {
      throw new SpillSpaceError(
        `The spill files filled the ${size(freeBytes)} free in ${tmpDir} after ${size(bytesRead)} of the source; ${advice}`,
      );
    }
    if (sourceBytes === undefined || bytesRead < sampleBytes || bytesRead === 0) return;
    const projected = (spilledBytes / bytesRead) * sourceBytes;
    if (projected > freeBytes) {
      throw new SpillSpaceError(
        `Source is ${size(sourceBytes)}: its first ${size(bytesRead)} spilled ${size(spilledBytes)} ` +
          `(${(spilledBytes / bytesRead).toFixed(2)} bytes per source byte), so the whole would need about ${size(projected)} in ${tmpDir}, ` +
          `but only ${size(freeBytes)} were free; ${advice}`,
      );
    }
  };
};

/** Called during pass 1 with the source bytes read and the spill bytes written so far; throws to stop the run. */
export type SpillWatch = ReturnType<typeof makeSpillWatch>;
