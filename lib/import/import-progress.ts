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
