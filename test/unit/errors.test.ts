import { DynamoDBServiceException } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { describeError, hasLoggableStack, loggableMessage } from '../../lib/errors.ts';

/** An AWS service's refusal as the SDK throws it; DynamoDB quotes the canonical request it refused. */
const signatureRefused = () =>
  new DynamoDBServiceException({
    name: 'InvalidSignatureException',
    $fault: 'client',
    $metadata: { httpStatusCode: 400, requestId: 'R1' },
    message:
      "The request signature we calculated does not match. The Canonical String for this request should have been 'POST / x-amz-security-token:SESSION-MARKER'",
  });

describe('error text for logs', () => {
  it("keeps an AWS service reply's name, status and request id, never its text or its stack", () => {
    const error = signatureRefused();
    expect(describeError(error)).toBe('InvalidSignatureException: AWS error reply (HTTP 400, request id R1; its message is not logged)');
    expect(loggableMessage(error)).not.toContain('SESSION-MARKER');
    expect(hasLoggableStack(error)).toBe(false);
  });

  it('keeps the message of an SDK error that got no reply, which carries $metadata without a status', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED', $metadata: { attempts: 3 } });
    expect(describeError(refused)).toBe('Error: connect ECONNREFUSED 127.0.0.1:9');
    expect(hasLoggableStack(refused)).toBe(true);
  });

  it('treats an unreadable reply as a reply', () => {
    // The SDK's error for a body it could not parse quotes the body, and carries the reply's metadata.
    const unreadable = Object.assign(new SyntaxError('Unexpected token < in JSON: <html>SESSION-MARKER'), {
      $metadata: { httpStatusCode: 502 },
    });
    expect(loggableMessage(unreadable)).not.toContain('SESSION-MARKER');
  });

  it("keeps the message and stack of any other error (the SDK's own, a network failure, the project's)", () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8000'), { code: 'ECONNREFUSED' });
    expect(describeError(refused)).toBe('Error: connect ECONNREFUSED 127.0.0.1:8000');
    expect(hasLoggableStack(refused)).toBe(true);
    expect(describeError('text')).toBe('text');
  });
});
