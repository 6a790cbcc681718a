import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { sinkOf, type SinkStore } from '../../../lib/storage/sink-protocol.ts';

/** A store that records the steps the protocol takes; `publishFails` makes its publish throw. */
const recordingStore = (publishFails = false) => {
  const steps: string[] = [];
  const stream = new PassThrough();
  const store: SinkStore<string> = {
    stream,
    shown: 'the destination',
    finish: async () => {
      steps.push('finish');
    },
    publish: async () => {
      steps.push('publish');
      if (publishFails) throw new Error('no answer');
      return 'version 1';
    },
    unpublish: async (published) => {
      steps.push(`unpublish ${published}`);
    },
    undoUnknown: async () => {
      steps.push('undoUnknown');
    },
    discard: async () => {
      steps.push('discard');
    },
  };
  return { steps, stream, sink: sinkOf(store) };
};

describe('the sink protocol', () => {
  it('refuses a commit before the stream ended, and discards what was written on abort', async () => {
    const { steps, sink } = recordingStore();
    await expect(sink.commit()).rejects.toThrowError('Archive for the destination was committed before it was complete');
    await sink.abort(new Error('failed'));
    await sink.abort(new Error('again'));
    expect(steps).toEqual(['discard']);
  });

  it('publishes on commit, and undoes exactly that publish on a later abort, once', async () => {
    const { steps, stream, sink } = recordingStore();
    stream.end('bytes');
    await sink.commit();
    await sink.abort(new Error('the other file failed'));
    await sink.abort(new Error('again'));
    expect(steps).toEqual(['finish', 'publish', 'unpublish version 1']);
    await expect(sink.commit()).rejects.toThrowError('Sink for the destination was already committed or aborted');
  });

  it('clears up after a publish that failed, which may have happened all the same', async () => {
    const { steps, stream, sink } = recordingStore(true);
    stream.end('bytes');
    await expect(sink.commit()).rejects.toThrowError('no answer');
    await sink.abort(new Error('failed'));
    expect(steps).toEqual(['finish', 'publish', 'undoUnknown']);
  });
});
