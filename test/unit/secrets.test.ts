import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../lib/errors.ts';
import { resolveSecret } from '../../lib/secrets.ts';

// No local SSM server exists; the mock stands in for SSM answering or failing.
const ssm = mockClient(SSMClient);
let savedRegion: string | undefined;
beforeAll(() => {
  savedRegion = process.env.AWS_REGION;
  process.env.AWS_REGION = 'us-east-1';
});
afterAll(() => {
  ssm.restore();
  if (savedRegion === undefined) delete process.env.AWS_REGION;
  else process.env.AWS_REGION = savedRegion;
});

describe('resolveSecret', () => {
  it('uses an inline secret as given, without calling SSM', async () => {
    ssm.reset();
    expect(await resolveSecret({ kind: 'value', value: 'inline-secret' }, 'INVENTORY_CLIENT_SECRET', AbortSignal.timeout(5_000))).toBe('inline-secret');
    expect(ssm.commandCalls(GetParameterCommand)).toHaveLength(0);
  });

  it('reads a secret named by <SECRET>_SSM as a decrypted SecureString', async () => {
    ssm.reset();
    ssm.on(GetParameterCommand, { Name: '/jamf/password-ok', WithDecryption: true }).resolves({ Parameter: { Value: 'from-ssm' } });
    expect(await resolveSecret({ kind: 'ssm', parameterName: '/jamf/password-ok' }, 'INVENTORY_PASSWORD', AbortSignal.timeout(5_000))).toBe('from-ssm');
    expect(ssm.commandCalls(GetParameterCommand)).toHaveLength(1);
  });

  it('turns an SSM failure into a ConfigError naming the _SSM variable', async () => {
    ssm.reset();
    ssm.on(GetParameterCommand).rejects(new Error('AccessDeniedException'));
    const error = await resolveSecret({ kind: 'ssm', parameterName: '/jamf/secret-denied' }, 'INVENTORY_CLIENT_SECRET', AbortSignal.timeout(5_000)).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe('INVENTORY_CLIENT_SECRET_SSM');
    expect((error as ConfigError).status).toBe(500);
  });

  it('calls an empty SSM parameter a misconfiguration', async () => {
    ssm.reset();
    ssm.on(GetParameterCommand).resolves({ Parameter: { Value: '' } });
    const error = await resolveSecret({ kind: 'ssm', parameterName: '/jamf/secret-empty' }, 'TICKETING_PASSWORD').catch((caught: unknown) => caught);
    expect((error as ConfigError).variable).toBe('TICKETING_PASSWORD_SSM');
  });

  it('stops waiting for a hung SSM read when the caller deadline passes', async () => {
    ssm.reset();
    ssm.on(GetParameterCommand).callsFake(() => new Promise(() => undefined));
    const started = Date.now();
    const error = await resolveSecret({ kind: 'ssm', parameterName: '/jamf/secret-hung' }, 'INVENTORY_CLIENT_SECRET', AbortSignal.timeout(100)).catch(
      (caught: unknown) => caught,
    );
    expect((error as Error).name).toBe('TimeoutError');
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
