import { execFileSync } from 'node:child_process';
import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createShadowService } from '../../../scripts/local/shadow-service.ts';

/** The stack's private folders of `label` still under the temporary directory. */
const foldersOf = (label: string): string[] => readdirSync(tmpdir()).filter((name) => name.startsWith(`${label}-`));

describe('createShadowService (the private folder npm start runs serverless-offline in)', () => {
  const made: string[] = [];
  afterEach(() => {
    for (const path of made.splice(0)) rmSync(path, { recursive: true, force: true });
  });

  const project = (): string => {
    const root = mkdtempSync(join(tmpdir(), 'shadow-project-'));
    made.push(root);
    writeFileSync(join(root, 'serverless.yml'), 'service: original\n');
    writeFileSync(join(root, 'package.json'), '{}');
    return root;
  };

  it('links the project, writes the given descriptor for its owner alone, and removes it all', async () => {
    const label = `shadow-test-${process.pid}-a`;
    const shadow = await createShadowService(project(), label, 'service: with-params\n');
    expect(statSync(shadow.dir).mode & 0o777).toBe(0o700);
    expect(lstatSync(join(shadow.dir, 'package.json')).isSymbolicLink()).toBe(true);
    const descriptor = join(shadow.dir, 'serverless.yml');
    expect(lstatSync(descriptor).isFile()).toBe(true);
    expect(statSync(descriptor).mode & 0o777).toBe(0o600);
    expect(readFileSync(descriptor, 'utf8')).toBe('service: with-params\n');
    await shadow.remove();
    expect(foldersOf(label)).toEqual([]);
  });

  it('is removed when the process exits without removing it (a stop cut short, a crash)', () => {
    const label = `shadow-test-${process.pid}-c`;
    const module = fileURLToPath(new URL('../../../scripts/local/shadow-service.ts', import.meta.url));
    const script = `const { createShadowService } = await import(${JSON.stringify(module)});
const shadow = await createShadowService(${JSON.stringify(project())}, ${JSON.stringify(label)}, 'service: x\\n');
process.stdout.write(shadow.dir);
process.exit(1);`;
    let dir = '';
    try {
      execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 });
    } catch (error) {
      dir = (error as { stdout: string }).stdout;
    }
    expect(dir).toContain(label);
    expect(foldersOf(label)).toEqual([]);
  });

  it('leaves no folder behind, and says why, when the project cannot be read', async () => {
    const label = `shadow-test-${process.pid}-b`;
    const missing = join(tmpdir(), `no-such-project-${process.pid}`);
    await expect(createShadowService(missing, label, 'service: x\n')).rejects.toMatchObject({ code: 'ENOENT' });
    expect(foldersOf(label)).toEqual([]);
  });
});
