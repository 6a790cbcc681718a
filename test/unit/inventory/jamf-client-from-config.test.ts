import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../lib/errors.ts';
import { jamfAuthFromConfig } from '../../../lib/inventory/jamf-client-from-config.ts';

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

describe('jamfAuthFromConfig', () => {
  it('uses an inline OAuth client secret as given', async () => {
    const auth = jamfAuthFromConfig({ kind: 'oauth', clientId: 'c', clientSecret: { kind: 'value', value: 'inline-secret' } });
    expect(auth.kind).toBe('oauth');
    expect(auth.kind === 'oauth' && (await auth.clientSecret(AbortSignal.timeout(5_000)))).toBe('inline-secret');
  });

  it('reads the basic password from SSM when named by INVENTORY_PASSWORD_SSM, only when asked', async () => {
    ssm.reset();
    ssm.on(GetParameterCommand, { Name: '/jamf/password-ok', WithDecryption: true }).resolves({ Parameter: { Value: 'from-ssm' } });
    const auth = jamfAuthFromConfig({ kind: 'basic', username: 'u', password: { kind: 'ssm', parameterName: '/jamf/password-ok' } });
    expect(ssm.commandCalls(GetParameterCommand)).toHaveLength(0);
    expect(auth.kind === 'basic' && (await auth.password(AbortSignal.timeout(5_000)))).toBe('from-ssm');
  });

  it('turns an SSM failure into a ConfigError naming the _SSM variable', async () => {
    ssm.reset();
    ssm.on(GetParameterCommand).rejects(new Error('AccessDeniedException'));
    const auth = jamfAuthFromConfig({ kind: 'oauth', clientId: 'c', clientSecret: { kind: 'ssm', parameterName: '/jamf/secret-denied' } });
    const error = await (auth.kind === 'oauth' ? auth.clientSecret(AbortSignal.timeout(5_000)) : Promise.resolve('')).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe('INVENTORY_CLIENT_SECRET_SSM');
    expect((error as ConfigError).status).toBe(500);
  });

  it('stops waiting for a hung SSM read when the caller deadline passes', async () => {
    ssm.reset();
    ssm.on(GetParameterCommand).callsFake(() => new Promise(() => undefined));
    const auth = jamfAuthFromConfig({ kind: 'oauth', clientId: 'c', clientSecret: { kind: 'ssm', parameterName: '/jamf/secret-hung' } });
    const started = Date.now();
    const error = await (auth.kind === 'oauth' ? auth.clientSecret(AbortSignal.timeout(100)) : Promise.resolve('')).catch((caught: unknown) => caught);
    expect((error as Error).name).toBe('TimeoutError');
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
