import { readdir, readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { functionNames } from '../../../scripts/local/invoke-target.ts';

const ROOT = new URL('../../../', import.meta.url);

describe('events/', () => {
  it('holds a success event and at least one failure event for every function of serverless.yml', async () => {
    const names = functionNames(await readFile(new URL('serverless.yml', ROOT), 'utf8'));
    expect(names).toEqual(['credentials', 'devices', 'createUser', 'getUser', 'importTickets']);
    for (const name of names) {
      const files = (await readdir(new URL(`events/${name}/`, ROOT))).filter((file) => file.endsWith('.json'));
      expect(files, name).toContain('success.json');
      expect(files.filter((file) => file !== 'success.json' && file !== 'scheduled.json').length, name).toBeGreaterThan(0);
    }
  });
});
