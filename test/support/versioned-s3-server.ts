import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { crc32 } from 'node:zlib';
import { crc32Base64 } from './s3-fault-proxy.ts';

/**
 * A small S3-compatible server on 127.0.0.1 that keeps object versions as S3 does, for what the
 * embedded server (fauxqs) does not: it accepts PutBucketVersioning but keeps one object per key,
 * returns no version id and lists no versions. Path-style requests, in memory, S3's REST XML:
 * CreateBucket, Put/GetBucketVersioning, PutObject, GetObject/HeadObject (with `versionId`),
 * multipart create/upload-part/complete (returning `x-amz-version-id`)/abort, DeleteObject with and
 * without `versionId` (a delete marker on a versioned bucket), ListObjectVersions. With `owner`, a
 * request whose `x-amz-expected-bucket-owner` names another account is refused with 403, as S3 does.
 */
export interface VersionedS3Server {
  endpoint: string;
  /** Every request as received: method, path, query and headers. */
  requests: { method: string; path: string; query: URLSearchParams; headers: IncomingMessage['headers'] }[];
  close(): Promise<void>;
}

interface Version {
  versionId: string;
  deleteMarker: boolean;
  body: Buffer;
  etag: string;
  contentType: string | undefined;
  metadata: Record<string, string>;
  lastModified: Date;
}

interface Upload {
  key: string;
  contentType: string | undefined;
  metadata: Record<string, string>;
  parts: Map<number, { body: Buffer; etag: string }>;
}

interface Bucket {
  versioning: 'Enabled' | 'Suspended' | undefined;
  /** Each key's versions, oldest first: the last is current. */
  objects: Map<string, Version[]>;
  uploads: Map<string, Upload>;
}

class S3Fault extends Error {
  readonly status: number;
  readonly code: string;
  readonly headers: Record<string, string>;

  constructor(status: number, code: string, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.headers = headers;
  }
}

const xml = (text: string): string => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
const md5 = (bytes: Buffer): string => createHash('md5').update(bytes).digest('hex');
const NAMESPACE = 'http://s3.amazonaws.com/doc/2006-03-01/';
/** Bodies larger than this are refused: the server is for tests, and holds everything in memory. */
const MAX_BODY_BYTES = 256 * 1024 * 1024;

/** The body as sent: `aws-chunked` (the SDK's streamed uploads with a trailing checksum) decoded. */
const decodeBody = (raw: Buffer, headers: IncomingMessage['headers']): Buffer => {
  if (!(headers['content-encoding'] ?? '').includes('aws-chunked')) return raw;
  const chunks: Buffer[] = [];
  let at = 0;
  for (let guard = 0; guard < raw.length + 1; guard += 1) {
    const lineEnd = raw.indexOf('\r\n', at);
    if (lineEnd === -1) break;
    const size = Number.parseInt(raw.subarray(at, lineEnd).toString('latin1').split(';')[0]!, 16);
    if (!Number.isFinite(size) || size === 0) break;
    chunks.push(raw.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(chunks);
};

const metadataOf = (headers: IncomingMessage['headers']): Record<string, string> =>
  Object.fromEntries(
    Object.entries(headers)
      .filter(([name]) => name.startsWith('x-amz-meta-'))
      .map(([name, value]) => [name.slice('x-amz-meta-'.length), String(value)]),
  );

const contentTypeOf = (headers: IncomingMessage['headers']): string | undefined => headers['content-type'];

const objectHeaders = (version: Version): Record<string, string> => ({
  etag: version.etag,
  'content-length': String(version.body.length),
  'last-modified': version.lastModified.toUTCString(),
  ...(version.contentType === undefined ? {} : { 'content-type': version.contentType }),
  ...Object.fromEntries(Object.entries(version.metadata).map(([name, value]) => [`x-amz-meta-${name}`, value])),
});

export const startVersionedS3Server = async (options: { owner?: string } = {}): Promise<VersionedS3Server> => {
  const buckets = new Map<string, Bucket>();
  const requests: VersionedS3Server['requests'] = [];
  const sockets = new Set<Socket>();

  const bucketOf = (name: string): Bucket => {
    const bucket = buckets.get(name);
    if (bucket === undefined) throw new S3Fault(404, 'NoSuchBucket', 'The specified bucket does not exist');
    return bucket;
  };

  /** A new version at `key`: on an unversioned (or suspended) bucket it replaces the `null` version. */
  const addVersion = (bucket: Bucket, key: string, version: Omit<Version, 'versionId' | 'lastModified'>): Version => {
    const versions = bucket.objects.get(key) ?? [];
    const versioned = bucket.versioning === 'Enabled';
    const added: Version = { ...version, versionId: versioned ? randomBytes(16).toString('base64url') : 'null', lastModified: new Date() };
    const kept = versioned ? versions : versions.filter((each) => each.versionId !== 'null');
    bucket.objects.set(key, [...kept, added]);
    return added;
  };

  const versionHeader = (bucket: Bucket, version: Version): Record<string, string> =>
    bucket.versioning === undefined ? {} : { 'x-amz-version-id': version.versionId };

  const send = (response: ServerResponse, status: number, headers: Record<string, string>, body: string | Buffer = '', head = false) => {
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    response.writeHead(status, {
      'x-amz-request-id': randomBytes(8).toString('hex').toUpperCase(),
      ...(body === '' ? { 'content-length': '0' } : { 'content-length': String(bytes.length) }),
      ...headers,
    });
    response.end(head ? undefined : bytes);
  };

  const sendXml = (response: ServerResponse, body: string, headers: Record<string, string> = {}) =>
    send(response, 200, { 'content-type': 'application/xml', ...headers }, `<?xml version="1.0" encoding="UTF-8"?>\n${body}`);

  const handle = (request: IncomingMessage, body: Buffer, response: ServerResponse): void => {
    const url = new URL(request.url ?? '/', 'http://s3.local');
    const method = request.method ?? 'GET';
    const query = url.searchParams;
    const [, bucketName = '', ...keyParts] = url.pathname.split('/');
    const key = decodeURIComponent(keyParts.join('/'));
    const head = method === 'HEAD';
    const expected = request.headers['x-amz-expected-bucket-owner'];
    if (options.owner !== undefined && expected !== undefined && expected !== options.owner) {
      throw new S3Fault(403, 'AccessDenied', 'Access Denied');
    }

    if (key === '') {
      if (method === 'PUT' && query.has('versioning')) {
        const status = /<Status>(Enabled|Suspended)<\/Status>/.exec(body.toString('utf8'))?.[1] as Bucket['versioning'];
        if (status === undefined) throw new S3Fault(400, 'MalformedXML', 'The XML you provided was not well-formed');
        bucketOf(bucketName).versioning = status;
        return send(response, 200, {});
      }
      if (method === 'GET' && query.has('versioning')) {
        const status = bucketOf(bucketName).versioning;
        return sendXml(
          response,
          `<VersioningConfiguration xmlns="${NAMESPACE}">${status === undefined ? '' : `<Status>${status}</Status>`}</VersioningConfiguration>`,
        );
      }
      if (method === 'PUT') {
        if (!buckets.has(bucketName)) buckets.set(bucketName, { versioning: undefined, objects: new Map(), uploads: new Map() });
        return send(response, 200, { location: `/${bucketName}` });
      }
      if (method === 'GET' && query.has('versions')) {
        const bucket = bucketOf(bucketName);
        const prefix = query.get('prefix') ?? '';
        const entries = [...bucket.objects.entries()]
          .filter(([name]) => name.startsWith(prefix))
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
          .flatMap(([name, versions]) =>
            versions
              .map((version, index) => ({ name, version, latest: index === versions.length - 1 }))
              .reverse()
              .map(({ version, latest }) =>
                version.deleteMarker
                  ? `<DeleteMarker><Key>${xml(name)}</Key><VersionId>${version.versionId}</VersionId><IsLatest>${latest}</IsLatest><LastModified>${version.lastModified.toISOString()}</LastModified></DeleteMarker>`
                  : `<Version><Key>${xml(name)}</Key><VersionId>${version.versionId}</VersionId><IsLatest>${latest}</IsLatest><LastModified>${version.lastModified.toISOString()}</LastModified><ETag>${xml(version.etag)}</ETag><Size>${version.body.length}</Size><StorageClass>STANDARD</StorageClass></Version>`,
              ),
          );
        return sendXml(
          response,
          `<ListVersionsResult xmlns="${NAMESPACE}"><Name>${xml(bucketName)}</Name><Prefix>${xml(prefix)}</Prefix><KeyMarker></KeyMarker><VersionIdMarker></VersionIdMarker><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>${entries.join('')}</ListVersionsResult>`,
        );
      }
      throw new S3Fault(501, 'NotImplemented', `${method} on a bucket is not implemented here`);
    }

    const bucket = bucketOf(bucketName);
    if (method === 'POST' && query.has('uploads')) {
      const uploadId = randomUUID();
      bucket.uploads.set(uploadId, {
        key,
        contentType: contentTypeOf(request.headers),
        metadata: metadataOf(request.headers),
        parts: new Map(),
      });
      return sendXml(
        response,
        `<InitiateMultipartUploadResult xmlns="${NAMESPACE}"><Bucket>${xml(bucketName)}</Bucket><Key>${xml(key)}</Key><UploadId>${uploadId}</UploadId></InitiateMultipartUploadResult>`,
      );
    }
    const uploadId = query.get('uploadId');
    if (uploadId !== null) {
      const upload = bucket.uploads.get(uploadId);
      if (upload === undefined || upload.key !== key) {
        throw new S3Fault(
          404,
          'NoSuchUpload',
          'The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.',
        );
      }
      if (method === 'PUT') {
        const partNumber = Number(query.get('partNumber'));
        if (!Number.isInteger(partNumber) || partNumber < 1 || partNumber > 10_000)
          throw new S3Fault(400, 'InvalidArgument', 'Part number must be an integer between 1 and 10000');
        const data = decodeBody(body, request.headers);
        const etag = `"${md5(data)}"`;
        upload.parts.set(partNumber, { body: data, etag });
        return send(response, 200, { etag, 'x-amz-checksum-crc32': crc32Base64(crc32(data)) });
      }
      if (method === 'DELETE') {
        bucket.uploads.delete(uploadId);
        return send(response, 204, {});
      }
      if (method === 'POST') {
        const listed = [...body.toString('utf8').matchAll(/<Part>([\s\S]*?)<\/Part>/g)].map(([, part]) => ({
          number: Number(/<PartNumber>(\d+)<\/PartNumber>/.exec(part!)?.[1]),
          etag: /<ETag>([^<]*)<\/ETag>/.exec(part!)?.[1]?.replaceAll('&quot;', '"'),
        }));
        if (listed.length === 0) throw new S3Fault(400, 'MalformedXML', 'The XML you provided was not well-formed');
        const chosen = listed.map(({ number, etag }, index) => {
          const part = upload.parts.get(number);
          if (part === undefined || part.etag !== etag)
            throw new S3Fault(400, 'InvalidPart', 'One or more of the specified parts could not be found');
          if (index > 0 && number <= listed[index - 1]!.number)
            throw new S3Fault(400, 'InvalidPartOrder', 'The list of parts was not in ascending order');
          return part;
        });
        const etag = `"${md5(Buffer.concat(chosen.map((part) => Buffer.from(part.etag.slice(1, -1), 'hex'))))}-${chosen.length}"`;
        bucket.uploads.delete(uploadId);
        const version = addVersion(bucket, key, {
          deleteMarker: false,
          body: Buffer.concat(chosen.map((part) => part.body)),
          etag,
          contentType: upload.contentType,
          metadata: upload.metadata,
        });
        return sendXml(
          response,
          `<CompleteMultipartUploadResult xmlns="${NAMESPACE}"><Location>/${xml(bucketName)}/${xml(key)}</Location><Bucket>${xml(bucketName)}</Bucket><Key>${xml(key)}</Key><ETag>${xml(etag)}</ETag></CompleteMultipartUploadResult>`,
          versionHeader(bucket, version),
        );
      }
    }
    if (method === 'PUT') {
      const data = decodeBody(body, request.headers);
      const version = addVersion(bucket, key, {
        deleteMarker: false,
        body: data,
        etag: `"${md5(data)}"`,
        contentType: contentTypeOf(request.headers),
        metadata: metadataOf(request.headers),
      });
      return send(response, 200, { etag: version.etag, ...versionHeader(bucket, version) });
    }
    const versions = bucket.objects.get(key) ?? [];
    const versionId = query.get('versionId');
    if (method === 'GET' || method === 'HEAD') {
      const version = versionId === null ? versions.at(-1) : versions.find((each) => each.versionId === versionId);
      if (version === undefined) {
        if (versionId !== null) throw new S3Fault(404, 'NoSuchVersion', 'The specified version does not exist.');
        throw new S3Fault(404, 'NoSuchKey', 'The specified key does not exist.');
      }
      if (version.deleteMarker) {
        const marker = { 'x-amz-delete-marker': 'true', 'x-amz-version-id': version.versionId };
        // S3 answers a delete marker as current with 404, and one asked for by its id with 405.
        if (versionId === null) throw new S3Fault(404, 'NoSuchKey', 'The specified key does not exist.', marker);
        throw new S3Fault(405, 'MethodNotAllowed', 'The specified method is not allowed against this resource.', marker);
      }
      return send(response, 200, { ...objectHeaders(version), ...versionHeader(bucket, version) }, version.body, head);
    }
    if (method === 'DELETE') {
      if (versionId !== null) {
        const found = versions.find((each) => each.versionId === versionId);
        const left = versions.filter((each) => each !== found);
        if (left.length === 0) bucket.objects.delete(key);
        else bucket.objects.set(key, left);
        return send(response, 204, {
          'x-amz-version-id': versionId,
          ...(found?.deleteMarker === true ? { 'x-amz-delete-marker': 'true' } : {}),
        });
      }
      if (bucket.versioning === undefined) {
        bucket.objects.delete(key);
        return send(response, 204, {});
      }
      const marker = addVersion(bucket, key, { deleteMarker: true, body: Buffer.alloc(0), etag: '', contentType: undefined, metadata: {} });
      return send(response, 204, { 'x-amz-delete-marker': 'true', 'x-amz-version-id': marker.versionId });
    }
    throw new S3Fault(501, 'NotImplemented', `${method} on an object is not implemented here`);
  };

  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://s3.local');
    requests.push({ method: request.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: request.headers });
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) request.destroy();
      else chunks.push(chunk);
    });
    request.on('end', () => {
      try {
        handle(request, Buffer.concat(chunks), response);
      } catch (error) {
        const fault = error instanceof S3Fault ? error : new S3Fault(500, 'InternalError', 'We encountered an internal error.');
        const requestId = randomBytes(8).toString('hex').toUpperCase();
        const document = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${fault.code}</Code><Message>${xml(fault.message)}</Message><RequestId>${requestId}</RequestId></Error>`;
        send(
          response,
          fault.status,
          { 'content-type': 'application/xml', 'x-amz-request-id': requestId, ...fault.headers },
          document,
          request.method === 'HEAD',
        );
      }
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    requests,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};
