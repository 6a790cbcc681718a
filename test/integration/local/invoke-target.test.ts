import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findEventFile, functionNames, invokeTarget, s3LocationsOf } from '../../../scripts/local/invoke-target.ts';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const template = readFileSync(join(root, 'serverless.yml'), 'utf8');

describe('invokeTarget', () => {
  it('resolves each function of serverless.yml to its TypeScript handler module', () => {
    expect(functionNames(template)).toEqual([
      'credentials',
      'devices',
      'mobileDevices',
      'refreshDevices',
      'createUser',
      'getUser',
      'importTickets',
    ]);
    expect(invokeTarget(root, template, 'createUser')).toMatchObject({
      modulePath: join(root, 'functions/create-user.ts'),
      exportName: 'handler',
      timeoutSeconds: 29,
    });
    expect(invokeTarget(root, template, 'importTickets')?.timeoutSeconds).toBe(900);
  });

  it("takes each function's memory size from the template (the provider's where it sets none, a stage parameter's default where it names one)", () => {
    expect(invokeTarget(root, template, 'importTickets')?.memoryMb).toBe(3008);
    expect(
      invokeTarget(
        root,
        'params:\n  default:\n    mb: 2048\nfunctions:\n  f:\n    handler: functions/f.handler\n    memorySize: ${param:mb}\n',
        'f',
      )?.memoryMb,
    ).toBe(2048);
    expect(invokeTarget(root, template, 'refreshDevices')?.memoryMb).toBe(1024);
    expect(invokeTarget(root, template, 'credentials')?.memoryMb).toBe(512);
  });

  it('says which local servers a function needs', () => {
    expect([...invokeTarget(root, template, 'credentials')!.needs]).toEqual([]);
    expect([...invokeTarget(root, template, 'devices')!.needs]).toEqual(['inventory']);
    expect([...invokeTarget(root, template, 'getUser')!.needs]).toEqual(['users']);
    expect([...invokeTarget(root, template, 'importTickets')!.needs]).toEqual(['storage']);
  });

  it.each(['nope', 'constructor', '__proto__', 'Credentials'])('knows no function "%s"', (name) => {
    expect(invokeTarget(root, template, name)).toBeUndefined();
  });
});

describe('findEventFile', () => {
  it('finds an event as given, under events/, or under events/<function>/ with or without .json', () => {
    const expected = join(root, 'events/credentials/success.json');
    expect(findEventFile(root, 'credentials', expected)).toBe(expected);
    expect(findEventFile(root, 'credentials', 'credentials/success.json')).toBe(expected);
    expect(findEventFile(root, 'credentials', 'success.json')).toBe(expected);
    expect(findEventFile(root, 'credentials', 'success')).toBe(expected);
  });

  it('finds nothing for a missing file or a directory', () => {
    expect(findEventFile(root, 'credentials', 'missing.json')).toBeUndefined();
    expect(findEventFile(root, 'credentials', 'credentials')).toBeUndefined();
  });
});

describe('s3LocationsOf', () => {
  it('names the buckets of source and destination and the source object', () => {
    expect(s3LocationsOf({ source: 's3://in-bucket/a/chat.csv', destination: 's3://out-bucket/t.tar' })).toEqual({
      buckets: ['in-bucket', 'out-bucket'],
      sources: [{ bucket: 'in-bucket', key: 'a/chat.csv' }],
    });
  });

  it('ignores local paths and events of other shapes', () => {
    expect(s3LocationsOf({ source: '/tmp/chat.csv', destination: '/tmp/t.tar' })).toEqual({ buckets: [], sources: [] });
    expect(s3LocationsOf(null)).toEqual({ buckets: [], sources: [] });
    expect(s3LocationsOf({ source: 42 })).toEqual({ buckets: [], sources: [] });
  });
});
