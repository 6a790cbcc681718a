import type { Writable } from 'node:stream';
import { StorageError, type Sink } from './storage.ts';

/**
 * What a kind of storage does at each step of the sink's protocol (sinkOf): the file sink's temporary
 * file and rename, the S3 sink's multipart upload and its completion.
 */
export interface SinkStore<Published> {
  readonly stream: Writable;
  /** The destination as errors name it. */
  readonly shown: string;
  /** Waits until every byte written is stored; a failure here has published nothing. */
  finish(): Promise<void>;
  /**
   * Makes the stored bytes the destination's: its result is what `unpublish` needs. A failure here
   * may have published all the same (an answer lost on the way back), so `undoUnknown` clears it up.
   */
  publish(): Promise<Published>;
  /** Undoes a publish (the other file of the run failed). */
  unpublish(published: Published): Promise<void>;
  /** Clears up after a publish that failed: undoes it only if it happened after all. */
  undoUnknown(reason: unknown): Promise<void>;
  /** Removes everything stored before a publish (the run failed first). */
  discard(reason: unknown): Promise<void>;
}

type SinkState<Published> = { kind: 'open' } | { kind: 'published'; published: Published } | { kind: 'unknown' } | { kind: 'closed' };

/**
 * The sink's protocol (storage.ts' Sink), once for every kind of storage: open until `commit`, which
 * finishes the stream and publishes; `abort` then undoes the publish, clears up after one that
 * failed, or discards what was stored; after an abort nothing more happens, and a second commit is refused.
 */
export const sinkOf = <Published>(store: SinkStore<Published>): Sink => {
  let state: SinkState<Published> = { kind: 'open' };
  const { stream, shown } = store;
  return {
    stream,
    commit: async () => {
      if (state.kind !== 'open') throw new StorageError(`Sink for ${shown} was already committed or aborted`);
      if (!stream.writableEnded) throw new StorageError(`Archive for ${shown} was committed before it was complete`);
      await store.finish();
      try {
        state = { kind: 'published', published: await store.publish() };
      } catch (error) {
        state = { kind: 'unknown' };
        throw error;
      }
    },
    abort: async (reason) => {
      const was = state;
      if (was.kind === 'closed') return;
      state = { kind: 'closed' };
      if (was.kind === 'published') await store.unpublish(was.published);
      else if (was.kind === 'unknown') await store.undoUnknown(reason);
      else await store.discard(reason);
    },
  };
};
