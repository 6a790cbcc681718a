import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  UploadPartCommand,
  type CompletedPart,
  type S3Client,
} from '@aws-sdk/client-s3';
import { randomUUID } from 'node:crypto';
import { PassThrough, Readable, Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { BufferPool } from '../bytes/buffer-pool.ts';
import { BlockFiller } from '../bytes/block-filler.ts';
import { formatLocation, LocationError } from './location.ts';
import { asError, describeError } from '../errors.ts';
import { sinkOf } from './sink-protocol.ts';
import { StorageError, type Sink, type Source } from './storage.ts';

export interface S3Object {
  bucket: string;
  key: string;
}

export interface S3SinkOptions {
  /** Multipart part size; S3's minimum is 5 MiB (but for the last part). Memory held ≈ partSizeBytes × (queueSize + 1). */
  partSizeBytes?: number;
  /** Parts uploading at once. */
  queueSize?: number;
  /**
   * Stops the calls that start and complete the upload when they have not answered (a run's
   * deadline); the parts are stopped by destroying the stream.
   */
  signal?: AbortSignal | undefined;
}

const DEFAULT_PART_BYTES = 8 * 1024 * 1024;
const DEFAULT_QUEUE_SIZE = 4;
/**
 * Every part carries a CRC32 that S3 checks, and the upload is created for it (the SDK adds such a
 * checksum to each part by default, and S3 then wants the upload to say so and the completion to
 * list each part's).
 */
const CHECKSUM = 'CRC32';
/** S3 numbers a multipart upload's parts 1 to 10,000: 80 GB at the default part size. */
const MAX_PARTS = 10_000;
/**
 * How long clean-up calls (aborting the upload, deleting a completed object) may take: a run stopped
 * by its deadline has a few seconds left, and a hung call must not spend them.
 */
const CLEAN_UP_MS = 5_000;
/**
 * The user metadata (`x-amz-meta-…`) each upload carries, a random token of its own: when a
 * completion's outcome is unknown, the object at the key is this upload's only if it has the token.
 */
const UPLOAD_TOKEN = 'import-upload';

const errorName = (error: unknown): string | undefined => (error as { name?: string } | undefined)?.name;
const statusCode = (error: unknown): number | undefined =>
  (error as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode;

const shown = (object: S3Object) => formatLocation({ kind: 's3', ...object });

/**
 * Why a request failed, for the one line a run ends with: the SDK's own error (a missing region or
 * credentials, a refused connection) by name and message, a service's reply by name, status and
 * request id only (lib/errors.ts), cut short.
 */
const whyFailed = (error: unknown): string => describeError(error).slice(0, 300);

/**
 * Streams the object's body; a missing bucket or key fails here, before anything is written. The
 * request stops when `signal` aborts (a run's deadline), and an error while the body is read names
 * the object (the SDK's own says no more than "aborted").
 */
export const openS3Source = async (client: S3Client, object: S3Object, signal?: AbortSignal): Promise<Source> => {
  let body: unknown;
  let bytes: number | undefined;
  try {
    ({ Body: body, ContentLength: bytes } = await client.send(new GetObjectCommand({ Bucket: object.bucket, Key: object.key }), {
      abortSignal: signal,
    }));
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    const name = errorName(error);
    if (name === 'NoSuchKey' || name === 'NotFound') throw new LocationError(`Source object ${shown(object)} does not exist`);
    if (name === 'NoSuchBucket') throw new LocationError(`Source bucket ${object.bucket} does not exist`);
    if (name === 'AccessDenied' || statusCode(error) === 403) throw new LocationError(`Access to source object ${shown(object)} is denied`);
    throw new StorageError(`Could not read source object ${shown(object)} (${whyFailed(error)})`, error);
  }
  if (!(body instanceof Readable)) throw new StorageError(`Source object ${shown(object)} has no readable body`);
  const named = new PassThrough({ highWaterMark: 1024 * 1024 });
  body.on('error', (error: unknown) => {
    named.destroy(new StorageError(`Reading source object ${shown(object)} failed (${whyFailed(error)})`, error));
  });
  // The run may still be opening its destinations when the body breaks (or its deadline destroys
  // the request): the error waits for the reader, and must not crash the process meanwhile.
  named.on('error', () => undefined);
  // The reader may stop early (a failed run): the connection goes with it.
  named.on('close', () => body.destroy());
  body.pipe(named);
  return { stream: named, bytes };
};

/** What refused to create the upload: a missing bucket or denied access is the location's fault. */
const createFailed = (object: S3Object, error: unknown): Error => {
  const name = errorName(error);
  if (name === 'NoSuchBucket') return new LocationError(`Bucket ${object.bucket} of ${shown(object)} does not exist`);
  if (name === 'AccessDenied' || statusCode(error) === 403) return new LocationError(`Access to ${shown(object)} is denied`);
  return new StorageError(`Could not start the upload to ${shown(object)} (${whyFailed(error)})`, error);
};

/**
 * Streams into a multipart upload whose completion waits for `commit`: the upload is created when the
 * sink is opened (a missing bucket or denied access fails before any work), parts of
 * `partSizeBytes` go up as the writer fills them, at most `queueSize` at once (memory stays bounded
 * whatever the size), and only `commit` completes the upload, so nothing appears at the key, nor
 * replaces an object already there, until the run has succeeded: ending the stream is not enough.
 * A failed part fails the writer at once; `abort` cancels the parts in flight and aborts the upload,
 * each clean-up call bounded in time. Undoing a `commit` deletes only the object version the
 * completion returned (on a versioned bucket the previous version is current again; on an
 * unversioned one the key is deleted); a completion whose outcome is unknown is asked about
 * (HeadObject, the upload's token in its metadata) before its version is deleted.
 */
export const openS3Sink = async (client: S3Client, object: S3Object, contentType: string, options: S3SinkOptions = {}): Promise<Sink> => {
  const partBytes = options.partSizeBytes ?? DEFAULT_PART_BYTES;
  const queueSize = options.queueSize ?? DEFAULT_QUEUE_SIZE;
  const target = { Bucket: object.bucket, Key: object.key };
  const token = randomUUID();
  let uploadId: string | undefined;
  try {
    ({ UploadId: uploadId } = await client.send(
      new CreateMultipartUploadCommand({
        ...target,
        ContentType: contentType,
        ChecksumAlgorithm: CHECKSUM,
        Metadata: { [UPLOAD_TOKEN]: token },
      }),
      {
        abortSignal: options.signal,
      },
    ));
  } catch (error) {
    if (options.signal?.aborted) throw options.signal.reason;
    throw createFailed(object, error);
  }
  if (uploadId === undefined) throw new StorageError(`S3 started no upload to ${shown(object)}`);
  const upload = { ...target, UploadId: uploadId };
  // The writer sees one clear error naming the object, with the SDK's error as its cause.
  const uploadFailed = (error: unknown) => new StorageError(`Upload to ${shown(object)} failed (${whyFailed(error)})`, error);
  const cancel = new AbortController();
  const uploaded: CompletedPart[] = [];
  const uploading = new Set<Promise<void>>();
  // Part buffers whose upload finished, filled again rather than allocated anew.
  const pool = new BufferPool(partBytes);
  let nextPart = 1;
  const parts = new BlockFiller(pool, partBytes);
  let failure: Error | undefined;

  const send = (bytes: Buffer, length: number): void => {
    const partNumber = nextPart++;
    if (partNumber > MAX_PARTS)
      throw new StorageError(`Upload to ${shown(object)} needs more than ${MAX_PARTS} parts of ${partBytes} bytes`);
    const sending = client
      .send(
        new UploadPartCommand({
          ...upload,
          PartNumber: partNumber,
          Body: bytes.subarray(0, length),
          ContentLength: length,
          ChecksumAlgorithm: CHECKSUM,
        }),
        {
          abortSignal: cancel.signal,
        },
      )
      .then(({ ETag, ChecksumCRC32 }) => {
        uploaded.push({ PartNumber: partNumber, ETag, ChecksumCRC32 });
        pool.give(bytes);
      })
      .catch((error: unknown) => {
        failure ??= uploadFailed(error);
        stream.destroy(failure);
      })
      .finally(() => uploading.delete(sending));
    uploading.add(sending);
  };
  /** Waits until fewer than `count` parts are uploading (their promises never reject). */
  const inFlightBelow = async (count: number): Promise<void> => {
    while (uploading.size >= count) await Promise.race(uploading);
    if (failure !== undefined) throw failure;
  };

  const stream = new Writable({
    highWaterMark: 1024 * 1024,
    write(chunk: Buffer, _encoding, callback) {
      parts
        .add(chunk, async (part, filled) => {
          await inFlightBelow(queueSize);
          send(part, filled);
        })
        .then(() => callback(), callback);
    },
    final(callback) {
      (async () => {
        // The last part may be short; an empty object is one empty part.
        if (parts.length > 0 || nextPart === 1) {
          await inFlightBelow(queueSize);
          const last = parts.rest();
          send(last.block, last.length);
        }
        await inFlightBelow(1);
      })().then(() => callback(), callback);
    },
    destroy(error, callback) {
      cancel.abort(error ?? new Error('upload stopped'));
      callback(error);
    },
  });
  // Failures surface through the writer's pipeline and `commit`; this listener only prevents a crash.
  stream.on('error', () => undefined);
  const bounded = () => ({ abortSignal: AbortSignal.timeout(CLEAN_UP_MS) });
  /** Deletes the version this upload wrote; without a version id (an unversioned bucket) the key is all there is. */
  const deleteWritten = (versionId: string | undefined) =>
    client.send(new DeleteObjectCommand({ ...target, ...(versionId === undefined ? {} : { VersionId: versionId }) }), bounded());
  /**
   * Whether the completion happened, asked of the bucket: the upload is aborted first, so that no
   * completion still on its way can land after the question; then the key's current object is this
   * upload's only if it carries this upload's token. Unanswered, nothing is deleted: a guess could
   * delete (or hide) an object another run wrote.
   */
  const undoUnknown = async (): Promise<void> => {
    await client.send(new AbortMultipartUploadCommand(upload), bounded()).catch(() => undefined);
    let head;
    try {
      head = await client.send(new HeadObjectCommand(target), bounded());
    } catch {
      return;
    }
    if (head.Metadata?.[UPLOAD_TOKEN] !== token) return;
    await deleteWritten(head.VersionId).catch(() => undefined);
  };

  // Published: the version the completion returned (undefined on an unversioned bucket), which undoing deletes.
  return sinkOf<string | undefined>({
    stream,
    shown: shown(object),
    finish: async () => {
      try {
        await finished(stream);
      } catch (error) {
        throw failure ?? uploadFailed(error);
      }
    },
    publish: async () => {
      const parts = [...uploaded].sort((a, b) => a.PartNumber! - b.PartNumber!);
      try {
        const { VersionId: versionId } = await client.send(
          new CompleteMultipartUploadCommand({ ...upload, MultipartUpload: { Parts: parts } }),
          { abortSignal: options.signal },
        );
        return versionId;
      } catch (error) {
        // Sent, then failed, timed out or stopped: S3 may have completed it all the same (an answer
        // lost on the way back), so the clean-up asks before it deletes anything.
        if (options.signal?.aborted) throw options.signal.reason;
        throw uploadFailed(error);
      }
    },
    // The other file of the run failed after this one was completed (or the completion may have
    // happened): only the version this upload wrote goes, so the one before it is current again.
    // A bare delete of the key would put a delete marker over it on a versioned bucket.
    unpublish: async (versionId) => {
      await deleteWritten(versionId).catch(() => undefined);
    },
    undoUnknown,
    discard: async (reason) => {
      if (!stream.destroyed) stream.destroy(asError(reason));
      // Parts still on their way were cancelled; S3 drops the ones it has with the upload. A failed
      // abort leaves parts that the bucket's lifecycle rule for incomplete uploads removes.
      await client.send(new AbortMultipartUploadCommand(upload), bounded()).catch(() => undefined);
    },
  });
};
