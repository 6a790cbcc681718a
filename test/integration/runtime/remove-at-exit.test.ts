import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const NODE = fileURLToPath(new URL('../../../node_modules/.bin/node', import.meta.url));
const MODULE = fileURLToPath(new URL('../../../lib/runtime/remove-at-exit.ts', import.meta.url));

let directory: string;
beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'remove-at-exit-'));
});
afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

/** Runs `body` in a process of its own with `removeAtExit` imported, as the import's CLI does. */
const runChild = (body: string) =>
  promisify(execFile)(NODE, ['--input-type=module', '-e', `import { removeAtExit } from ${JSON.stringify(MODULE)};\n${body}`]).then(
    () => 0,
    (error: { code?: number }) => error.code ?? -1,
  );

describe('removeAtExit', () => {
  it('removes what is still registered when the process exits at once (a second Ctrl-C), and leaves what its owner released', async () => {
    const spill = join(directory, 'ticket-import-x');
    await mkdir(spill);
    await writeFile(join(spill, 'comments.spill'), 'records');
    const partial = join(directory, '.out.tar.1234.partial');
    await writeFile(partial, 'half an archive');
    const released = join(directory, 'out.tar');
    await writeFile(released, 'a committed archive');
    const code = await runChild(
      `removeAtExit(${JSON.stringify(spill)}); removeAtExit(${JSON.stringify(partial)}); const release = removeAtExit(${JSON.stringify(released)}); release(); process.exit(130);`,
    );
    expect(code).toBe(130);
    expect(await readdir(directory)).toEqual(['out.tar']);
  });
});
