import { DeleteObjectCommand, GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { PassThrough, Readable } from 'node:stream';
import { formatLocation, LocationError } from './location.ts';
import { asError, describeError } from '../errors.ts';
import { StorageError, type Sink, type Source } from './storage.ts';

export interface S3Object {
  bucket: string;
  key: string;
}

export interface S3SinkOptions {
  /** Multipart part size; S3's minimum is 5 MiB. Memory held ≈ partSizeBytes × queueSize. */
  partSizeBytes?: number;
  queueSize?: number;
  contentType?: string;
}

const DEFAULT_PART_BYTES = 8 * 1024 * 1024;
const DEFAULT_QUEUE_SIZE = 4;

const errorName = (error: unknown): string | undefined => (error as { name?: string } | undefined)?.name;
const statusCode = (error: unknown): number | undefined =>
  (error as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode;

const shown = (object: S3Object) => formatLocation({ kind: 's3', ...object });

/** Streams the object's body; a missing bucket or key fails here, before anything is written. */
export const openS3Source = async (client: S3Client, object: S3Object): Promise<Source> => {
  let body: unknown;
  let bytes: number | undefined;
  try {
    ({ Body: body, ContentLength: bytes } = await client.send(new GetObjectCommand({ Bucket: object.bucket, Key: object.key })));
  } catch (error) {
    const name = errorName(error);
    if (name === 'NoSuchKey' || name === 'NotFound') throw new LocationError(`Source object ${shown(object)} does not exist`);
    if (name === 'NoSuchBucket') throw new LocationError(`Source bucket ${object.bucket} does not exist`);
    if (name === 'AccessDenied' || statusCode(error) === 403) throw new LocationError(`Access to source object ${shown(object)} is denied`);
    throw new StorageError(`Could not read source object ${shown(object)} (${name ?? 'unknown error'})`, error);
  }
  if (!(body instanceof Readable)) throw new StorageError(`Source object ${shown(object)} has no readable body`);
  return { stream: body, bytes };
};

/**
 * A client whose every failed call also fails `body`: lib-storage's other part uploaders would
 * otherwise keep draining the archive after one part failed, and the writer would only learn of it
 * at the very end.
 */
const failingFast = (client: S3Client, fail: (error: unknown) => void): S3Client =>
  new Proxy(client, {
    get: (target, property, receiver) => {
      if (property !== 'send') return Reflect.get(target, property, receiver) as unknown;
      return (...args: Parameters<S3Client['send']>) =>
        (target.send as (...a: unknown[]) => Promise<unknown>).apply(target, args).catch((error: unknown) => {
          fail(error);
          throw error;
        });
    },
  });

/**
 * Streams into a multipart upload (`@aws-sdk/lib-storage`): parts of `partSizeBytes`, at most
 * `queueSize` in flight, so memory stays bounded whatever the archive size. Any failure aborts the
 * multipart upload, so no partial object is ever created; the object appears only when the writer
 * ends the stream and S3 completes the upload.
 */
export const openS3Sink = async (client: S3Client, object: S3Object, options: S3SinkOptions = {}): Promise<Sink> => {
  const body = new PassThrough({ highWaterMark: 1024 * 1024 });
  // The writer sees one clear error naming the object, with the SDK's error as its cause.
  const uploadFailed = (error: unknown) => {
    const detail = describeError(error).slice(0, 300);
    return new StorageError(`Upload to ${shown(object)} failed (${detail})`, error);
  };
  // Failures surface through the writer's pipeline and `commit`; this listener only prevents a crash.
  body.on('error', () => undefined);
  const upload = new Upload({
    client: failingFast(client, (error) => body.destroy(uploadFailed(error))),
    params: { Bucket: object.bucket, Key: object.key, Body: body, ContentType: options.contentType ?? 'application/x-tar' },
    partSize: options.partSizeBytes ?? DEFAULT_PART_BYTES,
    queueSize: options.queueSize ?? DEFAULT_QUEUE_SIZE,
    leavePartsOnError: false,
  });
  // done() settles only after every part uploader has stopped and, on failure, after
  // AbortMultipartUpload was sent; a rejection also fails the writer instead of stalling it.
  const outcome = upload.done().then(
    () => ({ ok: true as const }),
    (error: unknown) => {
      body.destroy(uploadFailed(error));
      return { ok: false as const, error };
    },
  );
  let committed = false;

  return {
    stream: body,
    commit: async () => {
      if (!body.writableEnded) throw new StorageError(`Archive for ${shown(object)} was committed before it was complete`);
      const result = await outcome;
      if (!result.ok) throw uploadFailed(result.error);
      committed = true;
    },
    abort: async (reason) => {
      if (!committed && !body.destroyed) body.destroy(asError(reason));
      const result = await outcome;
      // The writer may have ended the stream (so the upload completed) before the job failed, or the
      // job undoes a commit because the other file of the run failed.
      committed = false;
      if (result.ok) {
        await client.send(new DeleteObjectCommand({ Bucket: object.bucket, Key: object.key })).catch(() => undefined);
      }
    },
  };
};
