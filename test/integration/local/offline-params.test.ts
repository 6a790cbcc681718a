import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { paramArguments, paramVariables } from '../../../scripts/local/offline-params.ts';

const template = readFileSync(new URL('../../../serverless.yml', import.meta.url), 'utf8');

describe('paramVariables (which stage parameter feeds each Lambda variable)', () => {
  it('maps every parameterised variable of serverless.yml, including USERS_TABLE and IDEMPOTENCY_TABLE', () => {
    const mapping = paramVariables(template);
    expect(mapping.get('INVENTORY_URL')).toBe('inventoryUrl');
    expect(mapping.get('LATEST_OS_VERSION')).toBe('latestOsVersion');
    expect(mapping.get('REDIS_URL')).toBe('redisUrl');
    expect(mapping.get('USER_EMAIL_PATTERN')).toBe('userEmailPattern');
    expect(mapping.get('TICKETING_URL')).toBe('ticketingUrl');
    // A param with a fallback (`${param:usersTable, self:…}`) still counts.
    expect(mapping.get('USERS_TABLE')).toBe('usersTable');
    expect(mapping.get('IDEMPOTENCY_TABLE')).toBe('idempotencyTable');
  });

  it('finds no secret among them: secrets only reach handlers through the environment', () => {
    const mapping = paramVariables(template);
    for (const secret of ['INVENTORY_CLIENT_SECRET', 'INVENTORY_PASSWORD', 'TICKETING_PASSWORD']) {
      expect(mapping.has(secret)).toBe(false);
      expect(mapping.get(`${secret}_SSM`)).toMatch(/Ssm$/);
    }
  });

  it('ignores literal values, CloudFormation tags and other variable sources', () => {
    const mapping = paramVariables(`
provider:
  environment:
    NODE_OPTIONS: --enable-source-maps
    STAGE: \${sls:stage}
functions:
  a:
    environment:
      TABLE: !Ref Table
      URL: \${param:url}
  b:
`);
    expect([...mapping]).toEqual([['URL', 'url']]);
  });
});

describe('paramArguments', () => {
  const mapping = new Map([
    ['INVENTORY_URL', 'inventoryUrl'],
    ['REDIS_URL', 'redisUrl'],
    ['USERS_TABLE', 'usersTable'],
  ]);

  it('passes each set variable as --param name=value, keeping = inside the value', () => {
    expect(paramArguments(mapping, { INVENTORY_URL: 'http://127.0.0.1:1/?a=b', USERS_TABLE: 'users-local' })).toEqual([
      '--param',
      'inventoryUrl=http://127.0.0.1:1/?a=b',
      '--param',
      'usersTable=users-local',
    ]);
  });

  it('leaves out unset and blank variables, so the template default applies', () => {
    expect(paramArguments(mapping, { REDIS_URL: '  ', INVENTORY_URL: undefined })).toEqual([]);
  });
});
