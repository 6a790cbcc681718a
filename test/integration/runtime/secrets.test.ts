import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../lib/errors.ts';
import { resolveSecret } from '../../../lib/runtime/secrets.ts';
import { LOCAL_AWS_ENV } from '../../../scripts/local/local-aws.ts';
import { saveEnvironment, setEnvironment } from '../../support/environment.ts';
import { startFakeSsm, type FakeSsm } from '../../support/fake-ssm.ts';
import { failureOf } from '../../support/failure-of.ts';

// One loopback SSM for the file (Powertools keeps its client and endpoint), a parameter name per test.
let ssm: FakeSsm;
let restoreEnvironment: () => void;
beforeAll(async () => {
  ssm = await startFakeSsm(
    { '/jamf/password-ok': 'from-ssm', '/jamf/secret-empty': '' },
    { denied: ['/jamf/secret-denied'], hanging: ['/jamf/secret-hung'] },
  );
  restoreEnvironment = saveEnvironment(['AWS_ENDPOINT_URL_SSM', 'AWS_SESSION_TOKEN', 'AWS_PROFILE', ...Object.keys(LOCAL_AWS_ENV)]);
  setEnvironment({ ...LOCAL_AWS_ENV, AWS_ENDPOINT_URL_SSM: ssm.endpoint, AWS_SESSION_TOKEN: undefined, AWS_PROFILE: undefined });
});
afterAll(async () => {
  restoreEnvironment();
  await ssm.close();
});

describe('resolveSecret against an SSM-compatible server on loopback', () => {
  it('uses an inline secret as given, without calling SSM', async () => {
    expect(await resolveSecret({ kind: 'value', value: 'inline-secret' }, AbortSignal.timeout(5_000))).toBe('inline-secret');
    expect(ssm.requests()).toEqual([]);
  });

  it('reads a secret named by <SECRET>_SSM as a decrypted SecureString', async () => {
    expect(
      await resolveSecret(
        { kind: 'ssm', parameterName: '/jamf/password-ok', variable: 'INVENTORY_PASSWORD_SSM' },
        AbortSignal.timeout(5_000),
      ),
    ).toBe('from-ssm');
    expect(ssm.requests().filter((request) => request.Name === '/jamf/password-ok')).toEqual([
      { Name: '/jamf/password-ok', WithDecryption: true },
    ]);
  });

  it('turns a refused read into a ConfigError (500) naming the _SSM variable', async () => {
    const error = await failureOf(
      resolveSecret(
        { kind: 'ssm', parameterName: '/jamf/secret-denied', variable: 'INVENTORY_CLIENT_SECRET_SSM' },
        AbortSignal.timeout(5_000),
      ),
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe('INVENTORY_CLIENT_SECRET_SSM');
    expect((error as ConfigError).status).toBe(500);
    expect((error as ConfigError).message).toBe('Configuration error: INVENTORY_CLIENT_SECRET_SSM could not be read from SSM');
  });

  it('calls an empty SSM parameter a misconfiguration', async () => {
    const error = await failureOf(resolveSecret({ kind: 'ssm', parameterName: '/jamf/secret-empty', variable: 'TICKETING_PASSWORD_SSM' }));
    expect((error as ConfigError).variable).toBe('TICKETING_PASSWORD_SSM');
    expect((error as ConfigError).message).toContain('names an empty SSM parameter');
  });

  it('stops waiting for a stalled SSM read when the caller deadline passes', async () => {
    const deadline = new AbortController();
    const reading = failureOf(
      resolveSecret({ kind: 'ssm', parameterName: '/jamf/secret-hung', variable: 'INVENTORY_CLIENT_SECRET_SSM' }, deadline.signal),
    );
    // Abort once SSM holds the request, so the wait is what the deadline ends.
    for (let attempt = 0; attempt < 200 && !ssm.requests().some((request) => request.Name === '/jamf/secret-hung'); attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    deadline.abort(new DOMException('deadline', 'TimeoutError'));
    expect(((await reading) as Error).name).toBe('TimeoutError');
  });
});
