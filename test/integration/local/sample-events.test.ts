import { readdir, readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { functionNames } from '../../../scripts/local/invoke-target.ts';

const ROOT = new URL('../../../', import.meta.url);

describe('events/', () => {
  // refreshDevices ignores its (scheduled) event: its failures come from configuration and Jamf, not the event.
  const IGNORES_ITS_EVENT = new Set(['refreshDevices']);

  it('holds a success event and at least one failure event for every function of serverless.yml', async () => {
    const names = functionNames(await readFile(new URL('serverless.yml', ROOT), 'utf8'));
    expect(names).toEqual(['credentials', 'devices', 'mobileDevices', 'refreshDevices', 'createUser', 'getUser', 'importTickets']);
    for (const name of names) {
      const files = (await readdir(new URL(`events/${name}/`, ROOT))).filter((file) => file.endsWith('.json'));
      expect(files, name).toContain('success.json');
      if (IGNORES_ITS_EVENT.has(name)) continue;
      expect(files.filter((file) => file !== 'success.json' && file !== 'scheduled.json').length, name).toBeGreaterThan(0);
    }
  });
});
