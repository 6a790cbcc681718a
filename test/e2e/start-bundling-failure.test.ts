import { spawn } from 'node:child_process';
import { cp, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFIGURATION_VARIABLES } from '../../scripts/local/offline-command.ts';
import { isPortFree } from '../../scripts/local/ports.ts';
import { freePort } from '../support/free-port.ts';
import { groupAlive } from '../support/process-groups.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Copied, so the start script's own root is the copy and a handler there can be broken. */
const COPIED = new Set(['functions', 'scripts', 'serverless.yml', 'esbuild.config.cjs']);
const NOT_NEEDED = new Set(['.git', '.esbuild', '.serverless', 'dist', 'coverage']);
const EXIT_LIMIT_MS = 90_000;

describe('npm start with a handler that does not bundle', () => {
  let project: string;

  beforeAll(async () => {
    project = await mkdtemp(join(tmpdir(), 'start-broken-'));
    for (const name of await readdir(ROOT)) {
      if (NOT_NEEDED.has(name)) continue;
      if (COPIED.has(name)) await cp(join(ROOT, name), join(project, name), { recursive: true });
      else await symlink(join(ROOT, name), join(project, name));
    }
    const handler = join(project, 'functions/credentials.ts');
    await writeFile(handler, `import { missing } from './does-not-exist.ts';\n${await readFile(handler, 'utf8')}`);
  });
  afterAll(async () => {
    await rm(project, { recursive: true, force: true });
  });

  it(
    'stops at once with one line naming the file, exit 1, nothing left running',
    async () => {
      const port = await freePort();
      const env: Record<string, string | undefined> = { ...process.env, PORT: String(port), LOCAL_ENV_FILE: '' };
      for (const name of CONFIGURATION_VARIABLES) delete env[name];
      const child = spawn(process.execPath, ['scripts/start.ts'], { cwd: project, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      let errors = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString('utf8')));
      const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), EXIT_LIMIT_MS);
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      clearTimeout(timer);
      const group = Number(/process group (\d+)/.exec(output)?.[1]);
      expect(code).toBe(1);
      expect(errors).toMatch(/^start: bundling failed: functions\/credentials\.ts:1:\d+: .*does-not-exist/m);
      expect(output).not.toMatch(/^ready: /m);
      expect(output).toMatch(/^stopped$/m);
      expect(Number.isInteger(group)).toBe(true);
      expect(groupAlive(group)).toBe(false);
      expect(await isPortFree(port)).toBe(true);
      expect((await readdir(tmpdir())).filter((name) => name.startsWith(`device-users-offline-${port}-`))).toEqual([]);
    },
    EXIT_LIMIT_MS + 10_000,
  );
});
