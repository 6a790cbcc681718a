import { createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One S3 request as the proxy sees it: the method, the key's path and the query (`?uploadId=…&partNumber=2`). */
export interface S3Request {
  method: string;
  path: string;
  query: URLSearchParams;
}

/**
 * What happens to a request: passed on; never answered (a stalled connection); or passed on with its
 * response body cut off after `bytes`, the connection reset (a network failure mid-transfer).
 */
export type S3Fault = 'pass' | 'hang' | { cutAfterBytes: number };

export interface S3FaultProxy {
  endpoint: string;
  requests: S3Request[];
  decide: (decider: (request: S3Request) => S3Fault) => void;
  close: () => Promise<void>;
}

/**
 * A loopback HTTP proxy in front of the local S3 server that stalls or breaks chosen requests, as a
 * network does: what the server itself never does. Everything else is streamed through unchanged.
 */
export const startS3FaultProxy = async (target: string): Promise<S3FaultProxy> => {
  const upstream = new URL(target);
  const requests: S3Request[] = [];
  const sockets = new Set<Socket>();
  let decider: (request: S3Request) => S3Fault = () => 'pass';

  const server = createServer((incoming: IncomingMessage, response) => {
    const url = new URL(incoming.url ?? '/', 'http://proxy');
    const request = { method: incoming.method ?? 'GET', path: url.pathname, query: url.searchParams };
    requests.push(request);
    const fault = decider(request);
    if (fault === 'hang') {
      // Read what is sent, answer nothing.
      incoming.resume();
      return;
    }
    const outgoing = httpRequest(
      { host: upstream.hostname, port: upstream.port, method: incoming.method, path: incoming.url, headers: incoming.headers },
      (answer) => {
        response.writeHead(answer.statusCode ?? 500, answer.headers);
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
      },
    );
    outgoing.on('error', () => response.socket?.destroy());
    incoming.pipe(outgoing);
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
