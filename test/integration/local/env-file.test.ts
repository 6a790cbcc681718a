import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadLocalEnvFile } from '../../../scripts/local/env-file.ts';
import { clearEnvironment, saveEnvironment } from '../../support/environment.ts';

const TOUCHED = ['LOCAL_ENV_FILE', 'ENV_FILE_TEST_FROM_FILE', 'ENV_FILE_TEST_BOTH'];

describe('loadLocalEnvFile', () => {
  let dir: string;
  let restoreEnvironment: () => void;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'env-file-test-'));
    restoreEnvironment = saveEnvironment(TOUCHED);
    clearEnvironment(TOUCHED);
    await writeFile(join(dir, '.env'), 'ENV_FILE_TEST_FROM_FILE=from-file\nENV_FILE_TEST_BOTH=from-file\n');
  });
  afterEach(async () => {
    restoreEnvironment();
    await rm(dir, { recursive: true, force: true });
  });

  it('loads .env from the project root, the environment winning over the file', () => {
    process.env.ENV_FILE_TEST_BOTH = 'from-environment';
    expect(loadLocalEnvFile(dir)).toBe(join(dir, '.env'));
    expect(process.env.ENV_FILE_TEST_FROM_FILE).toBe('from-file');
    expect(process.env.ENV_FILE_TEST_BOTH).toBe('from-environment');
  });

  it('loads nothing when there is no .env', async () => {
    await rm(join(dir, '.env'));
    expect(loadLocalEnvFile(dir)).toBeUndefined();
  });

  it('loads nothing when LOCAL_ENV_FILE is empty', () => {
    process.env.LOCAL_ENV_FILE = '';
    expect(loadLocalEnvFile(dir)).toBeUndefined();
    expect(process.env.ENV_FILE_TEST_FROM_FILE).toBeUndefined();
  });

  it('loads the file LOCAL_ENV_FILE names, and refuses one that does not exist', async () => {
    await writeFile(join(dir, 'other.env'), 'ENV_FILE_TEST_FROM_FILE=from-other\n');
    process.env.LOCAL_ENV_FILE = 'other.env';
    expect(loadLocalEnvFile(dir)).toBe(join(dir, 'other.env'));
    expect(process.env.ENV_FILE_TEST_FROM_FILE).toBe('from-other');
    process.env.LOCAL_ENV_FILE = 'missing.env';
    expect(() => loadLocalEnvFile(dir)).toThrow(/LOCAL_ENV_FILE names .*missing\.env, which does not exist/);
  });
});
