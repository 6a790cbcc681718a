import type { S3Client } from '@aws-sdk/client-s3';
import { openFileSink, openFileSource } from './file-storage.ts';
import { openS3Sink, openS3Source, type S3SinkOptions } from './s3-storage.ts';
import type { OpenSink, OpenSource } from './storage.ts';

/** Opens either kind of location; the S3 client is created once by the entry point and shared. */
export const makeLocationOpeners = (deps: { s3: () => S3Client; s3Sink?: S3SinkOptions }): { openSource: OpenSource; openSink: OpenSink } => ({
  openSource: async (location) => (location.kind === 's3' ? openS3Source(deps.s3(), location) : openFileSource(location.path)),
  openSink: async (location) => (location.kind === 's3' ? openS3Sink(deps.s3(), location, deps.s3Sink) : openFileSink(location.path)),
});
