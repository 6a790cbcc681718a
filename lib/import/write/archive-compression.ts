import { availableParallelism } from 'node:os';
import { Writable } from 'node:stream';
import { constants, crc32, deflateRaw } from 'node:zlib';
import { BlockFiller } from '../../bytes/block-filler.ts';
import { BufferPool } from '../../bytes/buffer-pool.ts';
import type { Location } from '../../storage/location.ts';

/** How the archive is written: gzip-compressed for a `.tar.gz` or `.tgz` destination, else a plain tar. */
export type ArchiveCompression = 'gzip' | 'none';

/** By the destination's name, in any letter case; a dry run without a destination writes none. */
export const archiveCompression = (destination: Location | undefined): ArchiveCompression => {
  const name = destination === undefined ? '' : destination.kind === 's3' ? destination.key : destination.path;
  return /\.(tar\.gz|tgz)$/i.test(name) ? 'gzip' : 'none';
};

/** The content type an S3 object of the archive is stored with. */
export const ARCHIVE_CONTENT_TYPE: Record<ArchiveCompression, string> = { gzip: 'application/gzip', none: 'application/x-tar' };

/**
 * Level 1 of 1–9, chosen by measurement on the generated export's archive (docs/import.md, "The
 * archive"): 5.1:1 at about 215 MB/s of CPU, where level 2 gives 5.3:1 at 195, levels 3–4 6:1 at
 * 125 and the default 6 7.1:1 at 39 (nine seconds more for a 1,000,000-row archive).
 */
export const GZIP_LEVEL = 1;
/** Compressed apart, 1 MiB blocks lose nothing measurable against one stream (5.12:1 both). */
const BLOCK_BYTES = 1024 * 1024;
/** Blocks compressing at once in libuv's pool of four: a core's worth each and one more, leaving a thread for the file writes. */
const BLOCKS_IN_FLIGHT = Math.min(3, availableParallelism() + 1);
/** RFC 1952: deflate, no name or time, "fastest" (XFL 4), Unix. */
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 3]);

const compressBlock = (block: Buffer, level: number, last: boolean): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    // A sync flush ends a block on a byte boundary without marking it final, so the blocks join into one deflate stream.
    deflateRaw(block, { level, finishFlush: last ? constants.Z_FINISH : constants.Z_SYNC_FLUSH }, (error, compressed) =>
      error ? reject(error) : resolve(compressed),
    );
  });

/**
 * The archive gzip-compressed on its way to `output` in 1 MiB blocks deflated apart and joined, as pigz
 * does (docs/architecture.md, "The archive"); like the tar writer it never destroys `output`.
 */
export const gzipInto = (output: Writable, level: number = GZIP_LEVEL): Writable => {
  const stopped = new AbortController();
  // Compressed blocks in order; each settles, so an abandoned one is never an unhandled rejection.
  const queue: Promise<Buffer>[] = [];
  // Blocks whose compression finished, filled again rather than allocated anew (a new 1 MiB a block
  // left some 30 MB more waiting for the garbage collector at the peak of a 1,000,000-row run).
  const pool = new BufferPool(BLOCK_BYTES);
  const blocks = new BlockFiller(pool, BLOCK_BYTES);
  let crc = 0;
  let length = 0;
  let started = false;

  /** Writes `bytes` to `output`, waiting for its drain when it is full. */
  const put = async (bytes: Buffer): Promise<void> => {
    stopped.signal.throwIfAborted();
    if (!started) {
      started = true;
      output.write(GZIP_HEADER);
    }
    if (output.write(bytes)) return;
    await new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        output.off('drain', onDrain);
        reject(stopped.signal.reason as Error);
      };
      const onDrain = () => {
        stopped.signal.removeEventListener('abort', onAbort);
        resolve();
      };
      output.once('drain', onDrain);
      stopped.signal.addEventListener('abort', onAbort, { once: true });
    });
  };
  const dispatch = (block: Buffer, filled: number, last: boolean): void => {
    const full = block.subarray(0, filled);
    crc = crc32(full, crc);
    length += filled;
    const compressing = compressBlock(full, level, last);
    compressing.then(
      () => pool.give(block),
      () => undefined,
    );
    queue.push(compressing);
  };
  const putOldest = async (): Promise<void> => put(await queue.shift()!);

  const onFailure = (error: Error): void => {
    stream.destroy(error);
  };
  const onOutputClose = (): void => {
    if (!output.writableFinished) stream.destroy(new Error('Archive output closed before the archive was complete'));
  };
  const detach = (): void => {
    output.off('error', onFailure);
    output.off('close', onOutputClose);
  };
  const stream: Writable = new Writable({
    // As much may wait here as in the sink itself before the tar writer pauses.
    highWaterMark: output.writableHighWaterMark,
    write(chunk: Buffer, _encoding, callback) {
      // A destroyed output announces its error only on the next tick: stop at once.
      if (output.errored) {
        callback(output.errored);
        return;
      }
      blocks
        .add(chunk, async (block, filled) => {
          dispatch(block, filled, false);
          if (queue.length >= BLOCKS_IN_FLIGHT) await putOldest();
        })
        .then(() => callback(), callback);
    },
    final(callback) {
      (async () => {
        const last = blocks.rest();
        dispatch(last.block, last.length, true);
        while (queue.length > 0) await putOldest();
        const trailer = Buffer.alloc(8);
        trailer.writeUInt32LE(crc >>> 0, 0);
        trailer.writeUInt32LE(length % 2 ** 32, 4);
        await put(trailer);
        await new Promise<void>((resolve, reject) => output.end((error?: Error | null) => (error ? reject(error) : resolve())));
        detach();
      })().then(() => callback(), callback);
    },
    destroy(error, callback) {
      detach();
      stopped.abort(error ?? new Error('Archive compression stopped'));
      callback(error);
    },
  });
  // The writer sees failures through its own listener; this one only keeps a late error from crashing the process.
  stream.on('error', () => undefined);
  output.on('error', onFailure);
  output.on('close', onOutputClose);
  // A destroyed output announces its error only on the next tick: look at its state now.
  if (output.errored) stream.destroy(output.errored);
  else if (output.destroyed) onOutputClose();
  return stream;
};
