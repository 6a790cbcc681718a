import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback stand-in for AWS Systems Manager's GetParameter, speaking its wire format (the AWS JSON
 * 1.1 protocol: `POST /`, `X-Amz-Target: AmazonSSM.GetParameter`, `{"Name", "WithDecryption"}`), so
 * the functions read their `<SECRET>_SSM` parameters through the real SDK and Powertools. A name it
 * does not hold answers as SSM does: 400 with `__type` `ParameterNotFound`; a name in `denied`
 * gets SSM's `AccessDeniedException` (a role not allowed to read it); a name in `badSignature` gets
 * `InvalidSignatureException` quoting the canonical request, session token included, as AWS's
 * answer does; a name in `hanging` is never answered (an SSM that stalls).
 *
 * Powertools keeps its SSM client, and the endpoint it was made with, for the life of the process,
 * and each parameter for its cache time: a test file uses one fake and a parameter name per test.
 */
export interface FakeSsm {
  /** For `AWS_ENDPOINT_URL_SSM`. */
  endpoint: string;
  /** Every GetParameter request's body, in order. */
  requests: () => { Name: string; WithDecryption?: boolean }[];
  close: () => Promise<void>;
}

const bodyOf = async (request: IncomingMessage): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

export const startFakeSsm = async (
  parameters: Readonly<Record<string, string>>,
  faults: { hanging?: readonly string[]; denied?: readonly string[]; badSignature?: readonly string[] } = {},
): Promise<FakeSsm> => {
  const requests: { Name: string; WithDecryption?: boolean }[] = [];
  const server = createServer((request, response) => {
    void bodyOf(request).then((text) => {
      const send = (status: number, body: unknown) => {
        response.writeHead(status, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': 'fake-ssm' });
        response.end(JSON.stringify(body));
      };
      if (request.method !== 'POST' || request.headers['x-amz-target'] !== 'AmazonSSM.GetParameter') {
        return send(400, { __type: 'UnknownOperationException', message: `not served here: ${String(request.headers['x-amz-target'])}` });
      }
      const input = JSON.parse(text) as { Name: string; WithDecryption?: boolean };
      requests.push(input);
      if (faults.hanging?.includes(input.Name) === true) return;
      if (faults.badSignature?.includes(input.Name) === true) {
        const canonical = `POST\n/\n\nx-amz-security-token:${String(request.headers['x-amz-security-token'] ?? '')}\nx-amz-target:AmazonSSM.GetParameter`;
        return send(400, {
          __type: 'InvalidSignatureException',
          message: `The request signature we calculated does not match the signature you provided.\n\nThe Canonical String for this request should have been\n'${canonical}'`,
        });
      }
      if (faults.denied?.includes(input.Name) === true) {
        return send(400, {
          __type: 'AccessDeniedException',
          message: `User: arn:aws:sts::123456789012:assumed-role/devices/fn is not authorized to perform: ssm:GetParameter on resource: arn:aws:ssm:us-east-1:123456789012:parameter${input.Name}`,
        });
      }
      const value = parameters[input.Name];
      if (value === undefined) return send(400, { __type: 'ParameterNotFound', message: `Parameter ${input.Name} not found.` });
      return send(200, {
        Parameter: {
          ARN: `arn:aws:ssm:us-east-1:123456789012:parameter${input.Name}`,
          DataType: 'text',
          LastModifiedDate: 1_763_900_000.123,
          Name: input.Name,
          Type: 'SecureString',
          // SSM answers a SecureString's ciphertext unless asked to decrypt it.
          Value: input.WithDecryption === true ? value : 'AQICAHh-ciphertext-not-the-secret',
          Version: 3,
        },
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => [...requests],
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};
