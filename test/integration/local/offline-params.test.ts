import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { paramVariables, templateWithParams } from '../../../scripts/local/offline-params.ts';

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

describe('templateWithParams (the private copy of serverless.yml the local stack runs)', () => {
  const mapping = new Map([
    ['INVENTORY_URL', 'inventoryUrl'],
    ['REDIS_URL', 'redisUrl'],
    ['USERS_TABLE', 'usersTable'],
  ]);
  type Params = Record<string, Record<string, unknown>>;
  const paramsOf = (text: string): Params => (parse(text, { logLevel: 'silent' }) as { params: Params }).params;

  it('writes each set variable as its stage parameter, exactly as given, and changes nothing else', () => {
    const awkward = 'redis://:p#a\'ss: w"rd=@127.0.0.1:6379/0?x=1&y= 2';
    const copy = templateWithParams(template, mapping, { REDIS_URL: awkward, USERS_TABLE: 'users-local' });
    expect(paramsOf(copy).default).toEqual({ ...paramsOf(template).default, redisUrl: awkward, usersTable: 'users-local' });
    const { params: _copied, ...restOfCopy } = parse(copy, { logLevel: 'silent' }) as Record<string, unknown>;
    const { params: _original, ...restOfOriginal } = parse(template, { logLevel: 'silent' }) as Record<string, unknown>;
    expect(restOfCopy).toEqual(restOfOriginal);
    // CloudFormation tags stay as written (the deployment's resources are described in the same file).
    expect(copy.match(/!Ref \w+/g)).toEqual(template.match(/!Ref \w+/g));
  });

  it('sets the value in every stage block too, so it wins as a command-line --param would', () => {
    const withStage = `params:\n  default:\n    redisUrl: ''\n  dev:\n    redisUrl: redis://dev-cluster:6379\nprovider:\n  name: aws\n`;
    const params = paramsOf(templateWithParams(withStage, mapping, { REDIS_URL: 'redis://127.0.0.1:6390' }));
    expect(params).toEqual({ default: { redisUrl: 'redis://127.0.0.1:6390' }, dev: { redisUrl: 'redis://127.0.0.1:6390' } });
  });

  it('makes a block where params, default or a stage is empty, keeps a stage key that is no string, and drops trailing white space as osls does', () => {
    const env = { REDIS_URL: 'redis://127.0.0.1:6390  ' };
    expect(paramsOf(templateWithParams('service: s\n', mapping, env))).toEqual({ default: { redisUrl: 'redis://127.0.0.1:6390' } });
    expect(paramsOf(templateWithParams('params:\n', mapping, env))).toEqual({ default: { redisUrl: 'redis://127.0.0.1:6390' } });
    const copy = templateWithParams('params:\n  default:\n  1:\n    redisUrl: x\n  prod: ~\n', mapping, env);
    expect(copy.match(/^ {2}1:$/gm)).toHaveLength(1);
    expect(paramsOf(copy)).toEqual({
      default: { redisUrl: 'redis://127.0.0.1:6390' },
      1: { redisUrl: 'redis://127.0.0.1:6390' },
      prod: { redisUrl: 'redis://127.0.0.1:6390' },
    });
  });

  it('refuses, naming the block, a params or stage that is no block of parameters', () => {
    const env = { REDIS_URL: 'redis://127.0.0.1:6390' };
    expect(() => templateWithParams('params: ${file(./params.yml)}\n', mapping, env)).toThrow(
      'serverless.yml: `params` is not a block of stage parameters',
    );
    expect(() => templateWithParams('params:\n  default: &d\n    redisUrl: a\n  prod: *d\n', mapping, env)).toThrow(
      'serverless.yml: params.prod is not a block',
    );
    // Nothing to set: the template is used as it is.
    expect(templateWithParams('params: ${file(./params.yml)}\n', mapping, {})).toBe('params: ${file(./params.yml)}\n');
  });

  it('leaves out unset and blank variables, so the template default applies', () => {
    expect(paramsOf(templateWithParams(template, mapping, { REDIS_URL: '  ', INVENTORY_URL: undefined }))).toEqual(paramsOf(template));
  });
});
