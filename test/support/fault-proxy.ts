import { createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One DynamoDB call as seen on the wire: the `X-Amz-Target` operation and the JSON body. */
export interface DynamoCall {
  operation: string;
  body: string;
}

/**
 * What to do with a call: pass it on, fail it without forwarding, or forward it and then answer a
 * failure anyway (the write landed, the caller never learns it did), or refuse its signature as
 * DynamoDB does, quoting the canonical request (session token included) in the message.
 */
export type FaultDecision = 'pass' | 'fail' | 'fail-after-forwarding' | 'refuse-signature';

export interface FaultProxy {
  endpoint: string;
  calls: DynamoCall[];
  /** A decision may be a promise: the call waits for it (e.g. to hold a request mid-way). */
  decide: (decider: (call: DynamoCall) => FaultDecision | Promise<FaultDecision>) => void;
  close: () => Promise<void>;
}

const readBody = async (message: IncomingMessage): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const chunk of message) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

const INTERNAL_ERROR = JSON.stringify({
  __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError',
  message: 'Injected fault',
});

/** A loopback HTTP proxy in front of dynalite that injects DynamoDB's own 500 on chosen calls. */
export const startFaultProxy = async (target: string): Promise<FaultProxy> => {
  const upstream = new URL(target);
  const calls: DynamoCall[] = [];
  let decider: (call: DynamoCall) => FaultDecision | Promise<FaultDecision> = () => 'pass';

  const forward = (incoming: IncomingMessage, body: Buffer) =>
    new Promise<{ status: number; headers: IncomingMessage['headers']; body: Buffer }>((resolve, reject) => {
      const outgoing = httpRequest(
        { host: upstream.hostname, port: upstream.port, method: incoming.method, path: incoming.url, headers: incoming.headers },
        (response) => {
          readBody(response).then((data) => resolve({ status: response.statusCode ?? 500, headers: response.headers, body: data }), reject);
        },
      );
      outgoing.on('error', reject);
      outgoing.end(body);
    });

  const server = createServer((incoming, response) => {
    void (async () => {
      const body = await readBody(incoming);
      const target = String(incoming.headers['x-amz-target'] ?? '');
      const call = { operation: target.split('.').pop() ?? target, body: body.toString('utf8') };
      calls.push(call);
      const decision = await decider(call);
      if (decision === 'fail-after-forwarding') await forward(incoming, body);
      if (decision === 'refuse-signature') {
        const canonical = [
          'POST',
          '/',
          '',
          `x-amz-security-token:${String(incoming.headers['x-amz-security-token'] ?? '')}`,
          `x-amz-target:${target}`,
        ].join('\n');
        const refusal = JSON.stringify({
          __type: 'com.amazon.coral.service#InvalidSignatureException',
          message: `The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.\n\nThe Canonical String for this request should have been\n'${canonical}'`,
        });
        response.writeHead(400, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': 'REFUSED1' }).end(refusal);
        return;
      }
      if (decision !== 'pass') {
        response.writeHead(500, { 'content-type': 'application/x-amz-json-1.0' }).end(INTERNAL_ERROR);
        return;
      }
      const answer = await forward(incoming, body);
      response.writeHead(answer.status, answer.headers).end(answer.body);
    })().catch(() => response.writeHead(502).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    calls,
    decide: (next) => {
      decider = next;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
};
