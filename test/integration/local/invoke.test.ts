import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFIGURATION_VARIABLES } from '../../../scripts/local/offline-command.ts';
import { DEMO_USER } from '../../../demo/demo-user.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const run = promisify(execFile);

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** The environment without a .env file or any configuration variable: embedded defaults only. */
const embeddedDefaultsOnly = (): Record<string, string | undefined> => {
  const env: Record<string, string | undefined> = { ...process.env, LOCAL_ENV_FILE: '' };
  for (const name of [...CONFIGURATION_VARIABLES, 'LOCAL_REDIS']) delete env[name];
  return env;
};

/** `node scripts/invoke.ts …` on embedded defaults only. */
const invoke = async (...args: string[]): Promise<Outcome> => {
  const env = embeddedDefaultsOnly();
  try {
    const { stdout, stderr } = await run(process.execPath, ['scripts/invoke.ts', ...args], { cwd: ROOT, env, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout: string; stderr: string };
    return { code: typeof failed.code === 'number' ? failed.code : -1, stdout: failed.stdout, stderr: failed.stderr };
  }
};

/** The pretty-printed result follows the handler's one-line JSON log lines. */
const resultOf = (stdout: string): Record<string, unknown> =>
  JSON.parse(stdout.slice(stdout.indexOf('\n{\n') + 1)) as Record<string, unknown>;
const logLines = (stdout: string) =>
  stdout
    .split('\n')
    .filter((line) => line.startsWith('{"'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('npm run invoke -- <function> <event.json>', () => {
  let scratch: string;
  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'invoke-test-'));
  });
  afterAll(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  it('runs credentials with its sample event: the log line, then the result', async () => {
    const { code, stdout } = await invoke('credentials', 'events/credentials/success.json');
    expect(code).toBe(0);
    expect(resultOf(stdout)).toMatchObject({ statusCode: 200, body: '{"client_id":"demo-client","client_secret":"demo-secret-value"}' });
    expect(logLines(stdout)).toEqual([expect.objectContaining({ message: 'request', path: '/credentials', status_code: 200 })]);
  });

  it('runs createUser against the embedded DynamoDB-compatible store', async () => {
    const { code, stdout, stderr } = await invoke('createUser', 'success');
    expect(code).toBe(0);
    expect(stderr).toContain('local DynamoDB-compatible store');
    const result = resultOf(stdout) as { statusCode: number; headers: Record<string, string>; body: string };
    expect(result.statusCode).toBe(201);
    expect(result.headers.Location).toBe(`/api/users/${(JSON.parse(result.body) as { id: string }).id}`);
  });

  it('runs getUser with its success event against the demo user of the embedded store, and its failure event as 404', async () => {
    const found = await invoke('getUser', 'success');
    expect(found.code).toBe(0);
    expect(found.stderr).toContain(`DEMO DATA: one user, ${DEMO_USER.email}`);
    expect(JSON.parse((resultOf(found.stdout) as { body: string }).body)).toEqual(DEMO_USER);
    const missing = await invoke('getUser', 'not-found');
    expect(missing.code).toBe(0);
    expect(resultOf(missing.stdout)).toMatchObject({ statusCode: 404 });
  });

  it('runs devices against the demo inventory', async () => {
    const { code, stdout, stderr } = await invoke('devices', 'devices/success.json');
    expect(code).toBe(0);
    expect(stderr).toContain('DEMO DATA');
    const result = resultOf(stdout) as { statusCode: number; body: string };
    expect(result.statusCode).toBe(200);
    expect((JSON.parse(result.body) as unknown[]).length).toBeGreaterThan(100);
  });

  it('writes the whole result into a pipe before it exits', async () => {
    // A pipe takes 64 KiB at a time: the demo inventory's result is twice that, and exiting at once cut it there.
    const env = embeddedDefaultsOnly();
    const { stdout } = await run(
      'bash',
      ['-c', `"$0" scripts/invoke.ts devices devices/success.json 2>/dev/null | cat`, process.execPath],
      {
        cwd: ROOT,
        env,
        timeout: 60_000,
        maxBuffer: 16 << 20,
      },
    );
    expect(stdout.length).toBeGreaterThan(128 * 1024);
    const result = resultOf(stdout) as { statusCode: number; body: string };
    expect((JSON.parse(result.body) as unknown[]).length).toBeGreaterThan(100);
  });

  it('exits 0 when the reader of its output leaves early (| head)', async () => {
    const env = embeddedDefaultsOnly();
    const { stdout } = await run(
      'bash',
      [
        '-c',
        `"$0" scripts/invoke.ts devices devices/success.json 2>/dev/null | head -c 10 >/dev/null; echo "exit \${PIPESTATUS[0]}"`,
        process.execPath,
      ],
      {
        cwd: ROOT,
        env,
        timeout: 60_000,
      },
    );
    expect(stdout.trim()).toBe('exit 0');
  });

  it('runs importTickets with its sample event against the seeded local S3-compatible store', async () => {
    const { code, stdout } = await invoke('importTickets', 'success.json');
    expect(code).toBe(0);
    expect(resultOf(stdout)).toMatchObject({ rows: 250 });
    // One invocation of a fresh process is a cold start, as Lambda's environment lets Powertools tell.
    const lines = logLines(stdout);
    expect(lines.filter((line) => !('_aws' in line)).map((line) => [line.message, line.cold_start])).toEqual([
      ['import started', true],
      ['import finished', true],
    ]);
    // The successful run is counted, in a metrics line of its own.
    expect(lines.filter((line) => '_aws' in line)).toEqual([expect.objectContaining({ ImportSucceeded: 1, service: 'importTickets' })]);
  });

  it("puts the handler's ERROR lines on stdout with its other log lines, and exits 1 when it throws", async () => {
    // refreshDevices without a cluster: a configuration error, logged at start and thrown.
    const { code, stdout, stderr } = await invoke('refreshDevices', 'success');
    expect(code).toBe(1);
    expect(logLines(stdout)).toContainEqual(
      expect.objectContaining({ level: 'ERROR', message: 'configuration error at startup', variable: 'REDIS_URL' }),
    );
    expect(stderr).not.toContain('{"level"');
    expect(stderr).toContain('invoke: refreshDevices failed');
  });

  it('exits 2 and lists the functions for an unknown function', async () => {
    const { code, stderr, stdout } = await invoke('deleteEverything', 'events/credentials/success.json');
    expect(code).toBe(2);
    expect(stderr).toContain(
      'unknown function "deleteEverything" (known: credentials, devices, mobileDevices, refreshDevices, createUser, getUser, importTickets)',
    );
    expect(stdout).toBe('');
  });

  it('exits 2 for a missing event file, a directory, or a missing argument, naming the sample events', async () => {
    const missing = await invoke('credentials', 'no-such-event.json');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(
      'event file "no-such-event.json" not found (looked as given, in events/ and in events/credentials/); events/credentials/ holds invalid-extra-property, success\n',
    );
    expect((await invoke('credentials', 'events')).code).toBe(2);
    const noEvent = await invoke('devices');
    expect(noEvent.code).toBe(2);
    expect(noEvent.stderr).toMatch(
      /^invoke: an event is required; events\/devices\/ holds invalid-query, page, success, summary, wrong-method\nusage: npm run invoke -- <function> <event: a JSON file, or a name under events\/<function>\/>\n$/,
    );
    const nothing = await invoke();
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toContain(
      'invoke: a function and an event are required (functions: credentials, devices, mobileDevices, refreshDevices, createUser, getUser, importTickets)',
    );
  });

  it('suggests the function a name differs from only in case', async () => {
    const { code, stderr } = await invoke('createuser', 'success');
    expect(code).toBe(2);
    expect(stderr).toContain(
      'unknown function "createuser" (known: credentials, devices, mobileDevices, refreshDevices, createUser, getUser, importTickets); did you mean "createUser"?',
    );
  });

  it('exits 2 for an event file that is not JSON', async () => {
    const path = join(scratch, 'broken.json');
    await writeFile(path, '{"version": "2.0",');
    const { code, stderr } = await invoke('credentials', path);
    expect(code).toBe(2);
    expect(stderr).toContain('is not JSON');
  });
});
