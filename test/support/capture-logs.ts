/**
 * Captures the JSON lines handlers write to stdout (Powertools Logger and Metrics write there
 * directly), so tests can assert on the access-log line without mocking the logger.
 */
export interface CapturedLogs {
  lines: () => Record<string, unknown>[];
  /** The JSON lines on stderr: Powertools writes WARN and ERROR there. */
  errorLines: () => Record<string, unknown>[];
  /** Everything written to stdout and stderr. */
  raw: () => string;
  restore: () => void;
}

const jsonLines = (text: string): Record<string, unknown>[] =>
  text
    .split('\n')
    .filter((line) => line.trim().startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

/** Captures stdout (where handler lines go) and stderr (so secret checks see everything). */
export const captureStdout = (): CapturedLogs => {
  const originalOut = process.stdout.write.bind(process.stdout);
  const originalErr = process.stderr.write.bind(process.stderr);
  let buffer = '';
  let errors = '';
  let everything = '';
  const intercept = (toStdout: boolean) =>
    ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      if (toStdout) buffer += text;
      else errors += text;
      everything += text;
      const callback = rest.find((arg) => typeof arg === 'function') as (() => void) | undefined;
      callback?.();
      return true;
    }) as typeof process.stdout.write;
  process.stdout.write = intercept(true);
  process.stderr.write = intercept(false);
  return {
    raw: () => everything,
    lines: () => jsonLines(buffer),
    errorLines: () => jsonLines(errors),
    restore: () => {
      process.stdout.write = originalOut;
      process.stderr.write = originalErr;
    },
  };
};

/** The access-log lines (`"message": "request"`) among captured lines. */
export const accessLines = (logs: CapturedLogs) => logs.lines().filter((line) => line.message === 'request');
