import type { S3Client } from '@aws-sdk/client-s3';
import { filePlace, openFileSink, openFileSource } from './file-storage.ts';
import { formatLocation } from './location.ts';
import type { S3SinkOptions } from './s3-storage.ts';
import type { OpenSink, OpenSource, PlaceOf } from './storage.ts';

/**
 * Opens either kind of location. The S3 side (and with it the AWS SDK, about 0.3 s and 75 MB to load)
 * is loaded on the first S3 location only: a run between local files never needs it. `s3` returns
 * the one client the caller shares between sources and sinks.
 */
export const makeLocationOpeners = (deps: {
  s3: () => S3Client | Promise<S3Client>;
  s3Sink?: S3SinkOptions;
}): { openSource: OpenSource; openSink: OpenSink; placeOf: PlaceOf } => ({
  placeOf: async (location) => (location.kind === 'file' ? filePlace(location.path) : formatLocation(location)),
  openSource: async (location, signal) => {
    if (location.kind === 'file') return openFileSource(location.path);
    const { openS3Source } = await import('./s3-storage.ts');
    return openS3Source(await deps.s3(), location, signal);
  },
  openSink: async (location, contentType, signal) => {
    if (location.kind === 'file') return openFileSink(location.path);
    const { openS3Sink } = await import('./s3-storage.ts');
    return openS3Sink(await deps.s3(), location, contentType, { ...deps.s3Sink, signal });
  },
});
