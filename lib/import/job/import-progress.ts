import type { ImportProgress } from './import-pipeline.ts';

/**
 * Passes progress on at most once per `everyMs` (the pipeline reports every 10,000 rows): a terminal
 * line redrawn four times a second, a log line every 15 s.
 */
export const throttleProgress = (
  everyMs: number,
  report: (progress: ImportProgress) => void,
  now: () => number = Date.now,
): ((progress: ImportProgress) => void) => {
  let last = now();
  return (progress) => {
    const at = now();
    if (at - last < everyMs) return;
    last = at;
    report(progress);
  };
};

/** The figures of a progress report: throughput since the start, and the share done where the size is known. */
export interface ProgressFigures {
  rows: number;
  bytes_read: number;
  rows_per_s: number;
  mb_per_s: number;
  /** 0–100, absent for a source of unknown size (a pipe). */
  percent_done?: number;
}

const MB = 1024 * 1024;

export const progressFigures = (progress: ImportProgress, elapsedMs: number): ProgressFigures => {
  const seconds = Math.max(elapsedMs / 1000, 0.001);
  const figures: ProgressFigures = {
    rows: progress.rows,
    bytes_read: progress.bytesRead,
    rows_per_s: Math.round(progress.rows / seconds),
    mb_per_s: Math.round((progress.bytesRead / MB / seconds) * 10) / 10,
  };
  if (progress.sourceBytes !== undefined && progress.sourceBytes > 0) {
    figures.percent_done = Math.min(100, Math.floor((1000 * progress.bytesRead) / progress.sourceBytes) / 10);
  }
  return figures;
};
