/** How long output may take to leave before the process exits anyway (a reader that never reads). */
const DRAIN_LIMIT_MS = 10_000;

const written = (stream: NodeJS.WriteStream): Promise<void> =>
  new Promise((resolve) => {
    // An empty write's callback runs once everything written before it has left (or the stream failed).
    stream.write('', () => resolve());
  });

/**
 * A reader that went away (`npm run invoke … | head`) fails stdout or stderr with EPIPE: nothing
 * more can leave, which is no failure of the script's, so it ends with its own exit code rather than
 * an unhandled stream error. Any other stream error still ends the process as one. Call it first.
 */
export const toleratePipeReadersLeaving = (): void => {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
    });
  }
};

/**
 * `process.exit(code)` once what was written to stdout and stderr has left the process. Writes to a
 * pipe are asynchronous: exiting at once drops what the reader had not taken yet (`npm run invoke |
 * jq` got the first 64 KiB of a 140 KiB answer). Used where a script must exit although something
 * still holds the event loop (a handler's open clients, a failed run's sockets).
 */
export const exitWhenWritten = async (code: number): Promise<never> => {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, DRAIN_LIMIT_MS);
  });
  await Promise.race([Promise.all([written(process.stdout), written(process.stderr)]), limit]);
  clearTimeout(timer);
  process.exit(code);
};
