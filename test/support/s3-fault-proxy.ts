import { randomBytes } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { crc32 } from 'node:zlib';

/** One S3 request as the proxy sees it: the method, the key's path and the query (`?uploadId=…&partNumber=2`). */
export interface S3Request {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /**
   * The body of a POST (CompleteMultipartUpload's part list, for one), as text once it has been
   * received; other bodies (parts of many MB) are not kept.
   */
  body?: string;
}

/** An error answer in S3's wire format: the status and the `<Error>` document's code and message. */
export interface S3ErrorAnswer {
  status: number;
  code: string;
  message: string;
  /** The request id S3 gives the answer (`x-amz-request-id` and `<RequestId>`); by default 16 random hex digits, as S3's. */
  requestId?: string;
}

/** What S3 answers when it fails on its side (a 500 the SDK retries, then reports as `InternalError`). */
export const S3_INTERNAL_ERROR: S3ErrorAnswer = {
  status: 500,
  code: 'InternalError',
  message: 'We encountered an internal error. Please try again.',
};

/**
 * What happens to a request: passed on; never answered (a stalled connection); passed on with its
 * response body cut off after `bytes`, the connection reset (a network failure mid-transfer); or,
 * without reaching the server, answered with S3's error document (`S3_INTERNAL_ERROR`, say).
 */
export type S3Fault = 'pass' | 'hang' | { cutAfterBytes: number } | { error: S3ErrorAnswer };

export interface S3FaultProxyOptions {
  /**
   * Answer each UploadPart passed on with its part's CRC32 (`x-amz-checksum-crc32`, base64 of the
   * big-endian four bytes, over the body as forwarded), as S3 does for an upload created for CRC32
   * checksums; the local server checks no part checksum and answers none. A CompleteMultipartUpload
   * then reaches the server without its parts' checksum elements (recorded as sent, in `body`): the
   * local server reads only `<Part>`s of an ETag and a part number, and would otherwise complete an
   * empty object.
   */
  partChecksums?: boolean;
}

export interface S3FaultProxy {
  endpoint: string;
  requests: S3Request[];
  decide: (decider: (request: S3Request) => S3Fault) => void;
  close: () => Promise<void>;
}

/** Whether the request is an UploadPart (`PUT /bucket/key?partNumber=N&uploadId=…`, no copy source). */
export const isUploadPart = (request: S3Request): boolean =>
  request.method === 'PUT' &&
  request.query.has('partNumber') &&
  request.query.has('uploadId') &&
  request.headers['x-amz-copy-source'] === undefined;

/** Whether the request is a CompleteMultipartUpload (`POST /bucket/key?uploadId=…`). */
export const isCompleteMultipartUpload = (request: S3Request): boolean => request.method === 'POST' && request.query.has('uploadId');

const xmlText = (text: string): string => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

/** S3's error answer: the XML document it sends, with a request id and a host id shaped as S3's. */
const answerError = (response: ServerResponse, answer: S3ErrorAnswer): void => {
  const requestId = answer.requestId ?? randomBytes(8).toString('hex').toUpperCase();
  const hostId = randomBytes(48).toString('base64');
  const body =
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<Error><Code>${xmlText(answer.code)}</Code><Message>${xmlText(answer.message)}</Message><RequestId>${requestId}</RequestId><HostId>${hostId}</HostId></Error>`;
  response.writeHead(answer.status, {
    'content-type': 'application/xml',
    'content-length': Buffer.byteLength(body),
    'x-amz-request-id': requestId,
    'x-amz-id-2': hostId,
  });
  response.end(body);
};

/** The CRC32 as S3 writes it in `x-amz-checksum-crc32`: base64 of its four bytes, big-endian. */
export const crc32Base64 = (value: number): string => {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(value >>> 0);
  return bytes.toString('base64');
};

/**
 * A loopback HTTP proxy in front of the local S3 server that stalls, breaks or fails chosen
 * requests, as a network or S3 itself does: what the local server never does. Everything else is
 * streamed through unchanged (but for the part checksums of `options.partChecksums`).
 */
export const startS3FaultProxy = async (target: string, options: S3FaultProxyOptions = {}): Promise<S3FaultProxy> => {
  const upstream = new URL(target);
  const requests: S3Request[] = [];
  const sockets = new Set<Socket>();
  let decider: (request: S3Request) => S3Fault = () => 'pass';

  const server = createServer((incoming: IncomingMessage, response) => {
    const url = new URL(incoming.url ?? '/', 'http://proxy');
    const request: S3Request = { method: incoming.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: incoming.headers };
    requests.push(request);
    const fault = decider(request);
    if (fault === 'hang') {
      // Read what is sent, answer nothing.
      incoming.resume();
      return;
    }
    // What the proxy learns from the body as it goes by: the text of a POST, the CRC32 of a part.
    const keepText = request.method === 'POST';
    const checksumPart = options.partChecksums === true && isUploadPart(request);
    const chunks: Buffer[] = [];
    let crc = 0;
    const received = new Promise<void>((resolve) => {
      incoming.on('data', (chunk: Buffer) => {
        if (keepText) chunks.push(chunk);
        if (checksumPart) crc = crc32(chunk, crc);
      });
      incoming.on('end', () => {
        if (keepText) request.body = Buffer.concat(chunks).toString('utf8');
        resolve();
      });
    });
    if (typeof fault === 'object' && 'error' in fault) {
      // As S3 does, the answer comes once the request has been read; the server never sees it.
      void received.then(() => answerError(response, fault.error));
      return;
    }
    const forward = (headers: IncomingHttpHeaders, body?: Buffer) => {
      const outgoing = httpRequest(
        { host: upstream.hostname, port: upstream.port, method: incoming.method, path: incoming.url, headers },
        (answer) => {
          // The head waits for the whole request, so that a part's checksum covers all of it.
          void received.then(() => {
            const answerHeaders =
              checksumPart && answer.statusCode === 200 ? { ...answer.headers, 'x-amz-checksum-crc32': crc32Base64(crc) } : answer.headers;
            response.writeHead(answer.statusCode ?? 500, answerHeaders);
            if (fault === 'pass') {
              answer.pipe(response);
              return;
            }
            let sent = 0;
            answer.on('data', (chunk: Buffer) => {
              const room = fault.cutAfterBytes - sent;
              if (room > 0) response.write(chunk.subarray(0, room));
              sent += chunk.length;
              if (sent >= fault.cutAfterBytes) {
                answer.destroy();
                response.socket?.destroy();
              }
            });
            answer.on('end', () => response.end());
          });
        },
      );
      outgoing.on('error', () => response.socket?.destroy());
      if (body === undefined) incoming.pipe(outgoing);
      else outgoing.end(body);
    };
    if (options.partChecksums === true && isCompleteMultipartUpload(request)) {
      void received.then(() => {
        const body = Buffer.from((request.body ?? '').replace(/<(Checksum[A-Z0-9]+)>[^<]*<\/\1>/g, ''));
        forward({ ...incoming.headers, 'content-length': String(body.length) }, body);
      });
      return;
    }
    forward(incoming.headers);
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
    decide: (next) => {
      decider = next;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};
