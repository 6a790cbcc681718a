import type { Writable } from 'node:stream';
import { pack } from 'tar-stream';

export interface TarWriter {
  /** Adds one file entry; resolves once the archive has taken it (the output's backpressure holds it back). */
  addFile(name: string, content: Buffer): Promise<void>;
  /** Writes the end-of-archive blocks, ends `output` and waits until it finished. */
  finish(): Promise<void>;
  /** Stops writing to `output` without ending it (the caller aborts its sink). */
  abort(): void;
}

const OUTPUT_BUFFER_HIGH_WATER_MARKS = 16;
const OUTPUT_BUFFER_MAX_BYTES = 256 * 1024;

/**
 * An uncompressed POSIX (ustar) tar written to `output` with tar-stream's `pack`. The pack is drained
 * by hand rather than piped, so that on failure `output` is neither ended nor destroyed: it belongs
 * to the caller, who aborts it (e.g. the S3 multipart upload).
 */
export const makeTarWriter = (output: Writable, mtime: Date = new Date()): TarWriter => {
  const archive = pack();
  let failure: Error | undefined;
  const waiters = new Set<(error: Error) => void>();

  const fail = (error: Error): void => {
    failure ??= error;
    for (const reject of waiters) reject(failure);
    waiters.clear();
  };
  const onOutputError = (error: Error): void => fail(error);
  const onOutputClose = (): void => {
    if (!output.writableFinished) fail(new Error('Archive output closed before the archive was complete'));
  };
  const onDrain = (): void => {
    archive.resume();
  };
  // Waiting for 'drain' whenever write() says so would stop the archive after every entry with an
  // output of the default 16 KiB highWaterMark (an entry is ~40 KiB), idling on each round trip: a
  // few entries' worth may wait in a small-buffered output before the archive pauses (bounded: 256
  // KiB, or the output's own highWaterMark where that is larger, as the file and S3 sinks' 1 MiB).
  const ownLimit = output.writableHighWaterMark;
  const bufferLimit = Math.max(ownLimit, Math.min(OUTPUT_BUFFER_HIGH_WATER_MARKS * ownLimit, OUTPUT_BUFFER_MAX_BYTES));
  const onData = (chunk: unknown): void => {
    output.write(chunk as Buffer);
    if (output.writableLength >= bufferLimit) archive.pause();
  };
  output.on('error', onOutputError);
  output.on('close', onOutputClose);
  output.on('drain', onDrain);
  archive.on('data', onData);
  archive.on('error', (error: Error) => fail(error));

  const detach = (): void => {
    output.off('error', onOutputError);
    output.off('close', onOutputClose);
    output.off('drain', onDrain);
    archive.off('data', onData);
  };

  /** Settles with `work`, or rejects as soon as the output or the archive fails. */
  const guarded = <T>(work: (resolve: (value: T) => void, reject: (error: Error) => void) => void): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      // A destroyed output announces its error only on the next tick: look at its state first.
      if (output.errored) fail(output.errored);
      else if (output.destroyed) onOutputClose();
      if (failure !== undefined) {
        reject(failure);
        return;
      }
      const settle = (error: Error): void => reject(error);
      waiters.add(settle);
      work(
        (value) => {
          waiters.delete(settle);
          resolve(value);
        },
        (error) => {
          waiters.delete(settle);
          reject(error);
        },
      );
    });

  return {
    addFile: (name, content) =>
      guarded<void>((resolve, reject) => {
        archive.entry({ name, size: content.length, mtime, mode: 0o644, type: 'file' }, content, (error) =>
          error ? reject(error) : resolve(),
        );
      }),
    finish: async () => {
      await guarded<void>((resolve) => {
        archive.once('end', () => resolve());
        archive.finalize();
      });
      archive.off('data', onData);
      try {
        await guarded<void>((resolve, reject) => {
          output.end((error?: Error | null) => (error ? reject(error) : resolve()));
        });
      } finally {
        detach();
      }
    },
    abort: () => {
      detach();
      archive.destroy();
    },
  };
};
