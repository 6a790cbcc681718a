import { build } from 'esbuild';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readableStack } from '../../../lib/runtime/stack-trace.ts';
import { bundleOptions } from '../../../scripts/esbuild-options.ts';

describe('readableStack', () => {
  let workDir: string;
  let bundleUrl: string;

  beforeAll(async () => {
    workDir = await mkdtemp(join(tmpdir(), 'stack-trace-'));
    await mkdir(join(workDir, 'functions'));
    // Line 3, column 9 is where the error is made.
    await writeFile(
      join(workDir, 'functions/fails.ts'),
      'export const handler = () => {\n  const reason = "no";\n  throw new Error(reason);\n};\n',
    );
    await build({
      ...bundleOptions(),
      absWorkingDir: workDir,
      entryPoints: ['functions/fails.ts'],
      outdir: join(workDir, 'out/functions'),
      logLevel: 'error',
    });
    bundleUrl = pathToFileURL(join(workDir, 'out/functions/fails.mjs')).href;
  });
  afterAll(async () => {
    await rm(workDir, { recursive: true, force: true });
  });

  /** The stack a fresh Node process (as Lambda runs it: no --enable-source-maps) gets from the bundle. */
  const stackOf = async (url: string): Promise<string> => {
    const node = fileURLToPath(new URL('../../../node_modules/.bin/node', import.meta.url));
    const script = `const { handler } = await import(${JSON.stringify(url)}); try { handler(); } catch (error) { process.stdout.write(error.stack); }`;
    const { stdout } = await promisify(execFile)(node, ['--input-type=module', '-e', script], { timeout: 20_000 });
    return stdout;
  };

  it("names the TypeScript source and position of a bundle's frame, through the map beside it", async () => {
    const stack = await stackOf(bundleUrl);
    expect(stack).toContain('fails.mjs:');
    const readable = readableStack(stack);
    expect(readable).toMatch(/\bfunctions\/fails\.ts:3:9\b/);
    expect(readable).not.toContain('fails.mjs:');
  });

  it('leaves frames of files without a map, and other lines, as they are', () => {
    const stack =
      'Error: no\n    at handler (file:///var/task/functions/nowhere.mjs:1:200)\n    at node:internal/process/task_queues:105:5';
    expect(readableStack(stack)).toBe(stack);
  });
});
