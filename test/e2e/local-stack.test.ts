import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { get, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFIGURATION_VARIABLES } from '../../scripts/local/offline-command.ts';
import { isPortFree } from '../../scripts/local/ports.ts';
import { freePort } from '../support/free-port.ts';
import { groupAlive } from '../support/process-groups.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Bundling five functions with esbuild takes a while on two shared cores. */
const READY_TIMEOUT_MS = 150_000;

interface RunningStart {
  child: ChildProcess;
  output: () => string;
  errors: () => string;
  exited: Promise<number | null>;
}

/** One variable set in the environment replaces its default (and reaches the handler through the template). */
const LATEST_OS_VERSION = '26.0';

/** `node scripts/start.ts` in its own process group: no .env, no configuration variable but LATEST_OS_VERSION. */
const runStart = (port: number, options: { underShell?: boolean; env?: Record<string, string> } = {}): RunningStart => {
  const env: Record<string, string | undefined> = { ...process.env, PORT: String(port), LOCAL_ENV_FILE: '' };
  for (const name of [...CONFIGURATION_VARIABLES, 'LOCAL_REDIS']) delete env[name];
  Object.assign(env, { LATEST_OS_VERSION, ...options.env });
  // Under a shell, like `npm start`: the shell is the child, start.ts its child (`; true` keeps sh from exec'ing).
  const [command, args] = options.underShell
    ? ['/bin/sh', ['-c', `"${process.execPath}" scripts/start.ts; true`]]
    : [process.execPath, ['scripts/start.ts']];
  const child = spawn(command, args, { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let errors = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (errors += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, errors: () => errors, exited };
};

const waitFor = async <T>(probe: () => T | undefined, timeoutMs: number, what: string): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 0; attempt < 10_000 && Date.now() < deadline; attempt += 1) {
    const value = probe();
    if (value !== undefined) return value;
    await sleep(200);
  }
  throw new Error(`timed out waiting for ${what}`);
};

/** The private service folders (symlinks and bundles) of stacks on this port still on disk. */
const leftoverFolders = (port: number): string[] =>
  readdirSync(tmpdir()).filter((name) => name.startsWith(`device-users-offline-${port}-`));

const accessLines = (output: string): Record<string, unknown>[] =>
  output
    .split('\n')
    .filter((line) => line.startsWith('{') && line.includes('"message":"request"'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

const json = { 'content-type': 'application/json', accept: 'application/json' };

/** A GET whose body arrives as sent (fetch would undo a Content-Encoding), with its raw headers. */
const rawGet = (target: string, headers: Record<string, string>): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> =>
  new Promise((resolve, reject) => {
    const request = get(target, { headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }));
      response.on('error', reject);
    });
    request.on('error', reject);
  });

describe('npm start serves the whole API over HTTP on embedded defaults', () => {
  let port: number;
  let url: string;
  let stack: RunningStart;
  let offlineGroup: number;

  beforeAll(async () => {
    port = await freePort();
    stack = runStart(port);
    const ready = await Promise.race([
      waitFor(() => /^ready: (http:\/\/\S+)$/m.exec(stack.output())?.[1], READY_TIMEOUT_MS, 'the ready line'),
      stack.exited.then((code) => {
        throw new Error(`start exited (${code}) before it was ready:\n${stack.errors()}\n${stack.output().slice(-3000)}`);
      }),
    ]);
    url = ready;
    offlineGroup = Number(/serverless-offline starting \(process group (\d+)\)/.exec(stack.output())?.[1]);
  }, READY_TIMEOUT_MS + 20_000);

  afterAll(async () => {
    // Only if a test failed before the SIGTERM test stopped it.
    for (const group of [stack?.child.pid, offlineGroup]) {
      if (group !== undefined && Number.isInteger(group) && groupAlive(group)) process.kill(-group, 'SIGKILL');
    }
  });

  it('prints the URL on 127.0.0.1:$PORT and says the inventory is demo data', () => {
    expect(url).toBe(`http://127.0.0.1:${port}`);
    expect(stack.output()).toMatch(/INVENTORY_URL .*DEMO DATA/);
    expect(stack.output()).toMatch(/REDIS_URL .*memory cache only/);
    expect(stack.output()).toMatch(/LATEST_OS_VERSION +26\.0 \(from the environment\)/);
    expect(Number.isInteger(offlineGroup)).toBe(true);
  });

  it('passes the template its values in a private copy of serverless.yml, not on the command line the process list shows', () => {
    const commandLine = readFileSync(`/proc/${offlineGroup}/cmdline`, 'utf8').split('\0');
    expect(commandLine).toContain('offline');
    // LATEST_OS_VERSION=26.0 reaches the handlers (the next test), but not through an argument.
    expect(commandLine.filter((argument) => argument.includes('latestOsVersion') || argument.includes('26.0'))).toEqual([]);
    const [folder] = leftoverFolders(port);
    expect(folder).toBeDefined();
    expect(statSync(`${tmpdir()}/${folder}`).mode & 0o077).toBe(0);
    expect(statSync(`${tmpdir()}/${folder}/serverless.yml`).mode & 0o077).toBe(0);
    expect(readFileSync(`${tmpdir()}/${folder}/serverless.yml`, 'utf8')).toMatch(/^ {4}latestOsVersion: '26\.0'$/m);
  });

  it('answers GET /devices from the demo inventory: ascending unique ids, boolean os_is_latest', async () => {
    const response = await fetch(`${url}/devices`);
    expect(response.status).toBe(200);
    const devices = (await response.json()) as { id: string; os_version?: string; os_is_latest: unknown }[];
    expect(devices.length).toBeGreaterThan(100);
    const ids = devices.map((device) => BigInt(device.id));
    expect(ids.every((id, index) => index === 0 || id > ids[index - 1]!)).toBe(true);
    expect(devices.every((device) => typeof device.os_is_latest === 'boolean')).toBe(true);
    expect(new Set(devices.map((device) => device.os_is_latest))).toEqual(new Set([true, false]));
    // LATEST_OS_VERSION=26.0 from the environment, not the 26.1 default: 26.0 counts as latest.
    const on260 = devices.filter((device) => /^26\.0\b/.test(device.os_version ?? ''));
    expect(on260.length).toBeGreaterThan(0);
    expect(on260.every((device) => device.os_is_latest === true)).toBe(true);
    expect(devices.filter((device) => /^15\./.test(device.os_version ?? '')).every((device) => device.os_is_latest === false)).toBe(true);
    // The handler's access-log line reaches start's stdout, with the cache tier.
    const line = await waitFor(
      () => accessLines(stack.output()).find((entry) => entry.path === '/devices'),
      5_000,
      'the /devices access line',
    );
    expect(line).toMatchObject({ http_method: 'GET', status_code: 200, cache_tier: 'upstream' });
  });

  it('echoes POST /credentials and keeps the secret out of its output', async () => {
    const body = { client_id: 'e2e-client', client_secret: `e2e-secret-${randomUUID()}` };
    const response = await fetch(`${url}/credentials`, { method: 'POST', headers: json, body: JSON.stringify(body) });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(body);
    await waitFor(() => accessLines(stack.output()).find((entry) => entry.path === '/credentials'), 5_000, 'the /credentials access line');
    expect(stack.output() + stack.errors()).not.toContain(body.client_secret);
  });

  it('creates a user (201 + Location), reads it back (200) and refuses the same email in other case (409)', async () => {
    const email = `e2e.${randomUUID().slice(0, 8)}@example.com`;
    const created = await fetch(`${url}/api/users`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ email, first_name: 'Grace', lastName: 'Hopper' }),
    });
    expect(created.status).toBe(201);
    const user = (await created.json()) as { id: string; email: string; firstName: string };
    expect(user).toMatchObject({ email, username: email, firstName: 'Grace', lastName: 'Hopper', active: true });
    expect(created.headers.get('location')).toBe(`/api/users/${user.id}`);

    const read = await fetch(`${url}${created.headers.get('location')}`, { headers: { accept: 'application/json' } });
    expect(read.status).toBe(200);
    expect(await read.json()).toEqual(user);

    const duplicate = await fetch(`${url}/api/users`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ email: email.toUpperCase(), firstName: 'Other', lastName: 'Person' }),
    });
    expect(duplicate.status).toBe(409);
    expect(((await duplicate.json()) as { error: { status: number } }).error.status).toBe(409);
  });

  it('answers an invalid user with the 422 envelope naming the failed field', async () => {
    const response = await fetch(`${url}/api/users`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ email: 'jdoe@intranet', firstName: 'J', lastName: 'Doe' }),
    });
    expect(response.status).toBe(422);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const { error } = (await response.json()) as {
      error: { message: string; status: number; httpMessage: string; details: { path: string }[] };
    };
    expect(error).toMatchObject({
      message: 'Request validation failed: Parameter (user) failed schema validation',
      status: 422,
      httpMessage: 'Unprocessable Entity',
    });
    expect(error.details.map((detail) => detail.path)).toContain('/email');
  });

  it('answers an unknown user id with 404 and an unknown route with the 404 envelope', async () => {
    const missingUser = await fetch(`${url}/api/users/${randomUUID()}`, { headers: { accept: 'application/json' } });
    expect(missingUser.status).toBe(404);
    const unknown = await fetch(`${url}/no/such/route`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: { message: expect.any(String), status: 404, httpMessage: 'Not Found' } });
  });

  it('routes as API Gateway does: a trailing slash is another path, answered 404 by $default, never the echo', async () => {
    const body = JSON.stringify({ client_id: 'side-door', client_secret: `side-door-${randomUUID()}` });
    for (const path of ['/credentials/', '/credentials//', '/Credentials']) {
      const response = await fetch(`${url}${path}`, { method: 'POST', headers: json, body });
      expect(response.status, path).toBe(404);
      expect(await response.json(), path).toEqual({ error: { message: 'Not Found', status: 404, httpMessage: 'Not Found' } });
    }
    expect((await fetch(`${url}/devices/`)).status).toBe(404);
    expect(stack.output() + stack.errors()).not.toContain('side-door-');
  });

  it('answers a known path with another method with 405 and Allow', async () => {
    const response = await fetch(`${url}/devices`, { method: 'DELETE' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toContain('GET');
    expect(((await response.json()) as { error: { httpMessage: string } }).error.httpMessage).toBe('Method Not Allowed');
  });

  it("leaves a body below the function's own threshold uncompressed, as API Gateway does, whatever the caller accepts", async () => {
    const response = await rawGet(`${url}/devices`, { 'accept-encoding': 'gzip, deflate, br' });
    expect(response.status).toBe(200);
    // Well above the 1 KiB from which the emulator's web server would gzip it, below the handler's 256 KiB.
    expect(response.body.length).toBeGreaterThan(64 * 1024);
    expect(response.headers['content-encoding']).toBeUndefined();
    expect(response.headers.etag).toMatch(/^"[^"]+"$/);
    expect(response.headers.etag).not.toContain('-gzip');
    // The handler's one Vary, not a second one from the emulator's compression.
    expect(response.headers.vary?.split(',').map((name) => name.trim().toLowerCase())).toEqual(['accept-encoding']);
    expect((JSON.parse(response.body.toString('utf8')) as unknown[]).length).toBeGreaterThan(100);
  });

  it('adds no CORS headers and answers a preflight from the routes (405 in the envelope), as API Gateway does without CORS', async () => {
    const origin = 'http://app.example';
    const preflight = await fetch(`${url}/api/users`, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    expect(preflight.status).toBe(405);
    expect(await preflight.json()).toEqual({ error: { message: expect.any(String), status: 405, httpMessage: 'Method Not Allowed' } });
    expect([...preflight.headers.keys()].filter((name) => name.startsWith('access-control-'))).toEqual([]);
    const read = await fetch(`${url}/devices?limit=1`, { headers: { origin } });
    expect(read.status).toBe(200);
    expect([...read.headers.keys()].filter((name) => name.startsWith('access-control-'))).toEqual([]);
  });

  it('passes a JSON body of null or a bare string to the handler as sent: the 422 envelope, as deployed', async () => {
    for (const [path, parameter] of [
      ['/api/users', 'user'],
      ['/credentials', 'credentials'],
    ] as const) {
      for (const body of ['null', '"x"']) {
        const response = await fetch(`${url}${path}`, { method: 'POST', headers: json, body });
        expect(response.status, `${path} ${body}`).toBe(422);
        // The function's own Content-Type, without a charset added by the emulator.
        expect(response.headers.get('content-type')).toBe('application/json');
        expect(await response.json()).toEqual({
          error: {
            message: `Request validation failed: Parameter (${parameter}) failed schema validation`,
            status: 422,
            httpMessage: 'Unprocessable Entity',
            details: [{ path: '/', message: 'must be object' }],
          },
        });
      }
    }
  });

  it('answers a conditional GET /devices with a 304 without Content-Type or body, and adds no header the function did not send', async () => {
    const page = await rawGet(`${url}/devices?limit=1`, { range: 'bytes=0-9' });
    // A Range header changes nothing: API Gateway serves no byte ranges.
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('application/json');
    expect(page.headers['cache-control']).toBeUndefined();
    expect(page.headers['accept-ranges']).toBeUndefined();
    expect(JSON.parse(page.body.toString('utf8'))).toHaveLength(1);
    const etag = page.headers.etag!;
    expect(etag).toMatch(/^"[^"]+"$/);

    const notModified = await rawGet(`${url}/devices?limit=1`, { 'if-none-match': etag });
    expect(notModified.status).toBe(304);
    expect(notModified.headers['content-type']).toBeUndefined();
    expect(notModified.headers['cache-control']).toBeUndefined();
    expect(notModified.headers.etag).toBe(etag);
    expect(notModified.body.length).toBe(0);
  });

  it('serves both summaries on their own routes, counting what the lists serve, and 404 for another spelling', async () => {
    for (const list of ['/devices', '/mobile-devices']) {
      const devices = (await (await fetch(`${url}${list}`)).json()) as { os_is_latest: boolean }[];
      const response = await fetch(`${url}${list}/summary`);
      expect(response.status, list).toBe(200);
      expect(response.headers.get('etag')).toMatch(/^"[^"]+"$/);
      const summary = (await response.json()) as { devices: number; os_is_latest: { true: number; false: number } };
      expect(summary.devices).toBe(devices.length);
      expect(summary.os_is_latest.true).toBe(devices.filter((device) => device.os_is_latest).length);
      expect((await fetch(`${url}${list}/summary?limit=5`)).status).toBe(422);
      expect((await fetch(`${url}${list}/summary/`)).status).toBe(404);
    }
  });

  it('refuses a second start on the same port at once, with a clear message', async () => {
    const second = runStart(port);
    const code = await Promise.race([second.exited, sleep(20_000).then(() => 'still running')]);
    if (code === 'still running') process.kill(-second.child.pid!, 'SIGKILL');
    expect(code).toBe(1);
    expect(second.errors()).toContain(`port ${port} on 127.0.0.1 is already in use`);
    expect(second.output()).not.toMatch(/serverless-offline starting/);
    // The first stack is unaffected.
    expect((await fetch(`${url}/no/such/route`)).status).toBe(404);
  }, 30_000);

  it(
    'runs a second stack on another PORT side by side, each serving on its own port, and stops it on SIGINT',
    async () => {
      const otherPort = await freePort();
      // Its cluster is a port nobody listens on: the requests degrade to upstream, with a WARN line.
      const other = runStart(otherPort, { env: { REDIS_URL: `redis://127.0.0.1:${await freePort()}` } });
      try {
        const otherUrl = await waitFor(
          () => /^ready: (http:\/\/\S+)$/m.exec(other.output())?.[1],
          READY_TIMEOUT_MS,
          'the second ready line',
        );
        expect(otherUrl).toBe(`http://127.0.0.1:${otherPort}`);
        const [mine, theirs] = await Promise.all([fetch(`${url}/devices`), fetch(`${otherUrl}/devices`)]);
        expect([mine.status, theirs.status]).toEqual([200, 200]);
        // Each stack has its own demo inventory and store: the same generated devices, served twice.
        expect(((await theirs.json()) as unknown[]).length).toBe(((await mine.json()) as unknown[]).length);
        // Handler log lines of every level reach stdout (Powertools writes WARN and ERROR to stderr).
        await waitFor(
          () => (/^\{"level":"WARN".*"cache tier degraded"/m.test(other.output()) ? true : undefined),
          10_000,
          'the WARN line on stdout',
        );
        expect(other.errors()).not.toContain('{"level"');
        const group = Number(/process group (\d+)/.exec(other.output())?.[1]);
        expect(Number.isInteger(group)).toBe(true);
        other.child.kill('SIGINT');
        const code = await Promise.race([other.exited, sleep(25_000).then(() => 'still running')]);
        expect(code).toBe(0);
        expect(other.output()).toMatch(/^stopping \(SIGINT\)/m);
        await waitFor(() => (groupAlive(other.child.pid!) || groupAlive(group) ? undefined : true), 5_000, 'the second stack to end');
        expect(await isPortFree(otherPort)).toBe(true);
        expect(leftoverFolders(otherPort)).toEqual([]);
        // The first stack is unaffected.
        expect((await fetch(`${url}/no/such/route`)).status).toBe(404);
      } finally {
        if (groupAlive(other.child.pid!)) process.kill(-other.child.pid!, 'SIGKILL');
      }
    },
    READY_TIMEOUT_MS + 40_000,
  );

  it('stops on SIGTERM: both process groups end and the port is free again', async () => {
    stack.child.kill('SIGTERM');
    const code = await Promise.race([stack.exited, sleep(25_000).then(() => 'still running')]);
    expect(code).toBe(0);
    expect(stack.output()).toMatch(/^stopped$/m);
    await waitFor(() => (groupAlive(stack.child.pid!) || groupAlive(offlineGroup) ? undefined : true), 5_000, 'the process groups to end');
    expect(await isPortFree(port)).toBe(true);
    expect(leftoverFolders(port)).toEqual([]);
  }, 35_000);

  it(
    'stops everything when the process that started it dies without passing a signal on',
    async () => {
      const orphanPort = await freePort();
      const orphaned = runStart(orphanPort, { underShell: true });
      try {
        await waitFor(() => (/^ready: /m.test(orphaned.output()) ? true : undefined), READY_TIMEOUT_MS, 'the ready line');
        const group = Number(/process group (\d+)/.exec(orphaned.output())?.[1]);
        expect(Number.isInteger(group)).toBe(true);
        process.kill(orphaned.child.pid!, 'SIGKILL');
        await waitFor(() => (/^stopped$/m.test(orphaned.output()) ? true : undefined), 20_000, 'the stopped line');
        await waitFor(() => (groupAlive(orphaned.child.pid!) || groupAlive(group) ? undefined : true), 5_000, 'the process groups to end');
        expect(await isPortFree(orphanPort)).toBe(true);
        expect(leftoverFolders(orphanPort)).toEqual([]);
      } finally {
        if (groupAlive(orphaned.child.pid!)) process.kill(-orphaned.child.pid!, 'SIGKILL');
      }
    },
    READY_TIMEOUT_MS + 40_000,
  );
});
