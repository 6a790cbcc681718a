import { randomUUID } from 'node:crypto';
import { constants, createReadStream, open as openCallback } from 'node:fs';
import { open, realpath, rename, rm, stat } from 'node:fs/promises';
import { Socket } from 'node:net';
import { basename, dirname, join } from 'node:path';
import { finished } from 'node:stream/promises';
import { promisify } from 'node:util';
import { removeAtExit } from '../runtime/remove-at-exit.ts';
import { LocationError } from './location.ts';
import { sinkOf } from './sink-protocol.ts';
import { StorageError, type Sink, type Source } from './storage.ts';

const READ_CHUNK_BYTES = 1024 * 1024;
const SINK_BUFFER_BYTES = 1024 * 1024;

const code = (error: unknown): string | undefined => (error as NodeJS.ErrnoException | undefined)?.code;

const openDescriptor = promisify(openCallback);

/**
 * Opens the file first, so a missing or unreadable source fails before anything is written. A named
 * pipe is welcome too (`npm run import -- <(zcat export.csv.gz) out.tar`): it is opened without
 * blocking and read as a socket, so neither a writer that has not come yet nor one that stalled holds
 * the run. A blocking open or read would hold one of libuv's pool threads, and with it the process's
 * exit, until the writer came, wrote or closed, so Ctrl-C could not stop the run.
 */
export const openFileSource = async (path: string): Promise<Source> => {
  let kind;
  let fd: number;
  try {
    kind = await stat(path);
    if (!kind.isFile() && !kind.isFIFO()) throw new LocationError(`Source ${path} is not a regular file`);
    fd = await openDescriptor(path, kind.isFIFO() ? constants.O_RDONLY | constants.O_NONBLOCK : constants.O_RDONLY);
  } catch (error) {
    if (error instanceof LocationError) throw error;
    if (code(error) === 'ENOENT') throw new LocationError(`Source file ${path} does not exist`);
    if (code(error) === 'EACCES') throw new LocationError(`Source file ${path} is not readable`);
    throw new StorageError(`Could not open source file ${path}`, error);
  }
  // Until a writer has come, the pipe reports nothing to read (no end either): the socket waits.
  if (kind.isFIFO()) return { stream: new Socket({ fd, readable: true, writable: false }), bytes: undefined };
  return { stream: createReadStream(path, { fd, highWaterMark: READ_CHUNK_BYTES }), bytes: kind.size };
};

/** A path whose file does not exist yet: its folder's real path (symbolic links followed) and its name. */
const realFolderPath = async (path: string): Promise<string> =>
  realpath(dirname(path)).then(
    (folder) => join(folder, basename(path)),
    () => path,
  );

/**
 * Where a file is, so that two names of one file compare equal: an existing file is its device and
 * inode (whatever name reaches it: a symbolic link, a hard link, another letter case on a file
 * system that ignores case, a bind mount); a file yet to be written is its folder's real path and
 * its name.
 */
export const filePlace = async (path: string): Promise<string> => {
  const found = await stat(path).catch(() => undefined);
  return found === undefined ? `path ${await realFolderPath(path)}` : `file ${found.dev}:${found.ino}`;
};

/**
 * Fails with a LocationError when `path` cannot become the archive: its directory is missing or it
 * names an existing directory (which the final rename could never replace). Cheap, so a caller can
 * run it before any listing or source work; the sink checks again when it opens.
 */
export const checkFileDestination = async (path: string): Promise<void> => {
  const directory = dirname(path);
  const directoryStat = await stat(directory).catch(() => undefined);
  if (!directoryStat?.isDirectory()) throw new LocationError(`Destination directory ${directory} does not exist`);
  const existing = await stat(path).catch(() => undefined);
  if (existing?.isDirectory()) throw new LocationError(`Destination ${path} is a directory, not a file`);
};

/**
 * Writes to a hidden temporary file next to the destination and renames it into place on commit,
 * so the destination only ever holds a complete archive (rename is atomic within a directory).
 */
export const openFileSink = async (path: string): Promise<Sink> => {
  await checkFileDestination(path);
  const directory = dirname(path);
  const temporary = join(directory, `.${basename(path)}.${randomUUID().slice(0, 8)}.partial`);
  let handle;
  try {
    handle = await open(temporary, 'wx', 0o644);
  } catch (error) {
    if (code(error) === 'EACCES') throw new LocationError(`Destination directory ${directory} is not writable`);
    throw new StorageError(`Could not create a temporary file in ${directory}`, error);
  }
  const forget = removeAtExit(temporary);
  // `flush` fsyncs before close, so a rename never exposes a file whose data is still in flight.
  // A 1 MiB buffer, as the S3 sink's: with the default 16 KiB the archive waited on the disk every few
  // entries (a 1M-row archive was written in 1.1 s, now 0.75 s; 4 MiB measured no better).
  const stream = handle.createWriteStream({ flush: true, highWaterMark: SINK_BUFFER_BYTES });
  const closed = new Promise<void>((resolve) => stream.once('close', resolve));
  // The writer sees write errors through its own listener; this one only keeps a late error from crashing the process.
  stream.on('error', () => undefined);
  const discard = async (): Promise<void> => {
    if (!stream.destroyed) stream.destroy();
    await closed;
    await rm(temporary, { force: true });
    forget();
  };

  return sinkOf<void>({
    stream,
    shown: path,
    finish: async () => {
      try {
        await finished(stream);
        await closed;
      } catch (error) {
        throw new StorageError(`Could not write ${path}`, error);
      }
    },
    // A rename is atomic: one that failed moved nothing, and the temporary file is discarded.
    publish: async () => {
      try {
        await rename(temporary, path);
        forget();
      } catch (error) {
        throw new StorageError(`Could not write ${path}`, error);
      }
    },
    // Undoing a commit: the other file of the same run failed.
    unpublish: () => rm(path, { force: true }),
    undoUnknown: discard,
    discard,
  });
};
