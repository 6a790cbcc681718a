import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../../../', import.meta.url);

describe('the local stack runs the open-source osls CLI only', () => {
  it('never installs the commercial Serverless Framework that serverless-offline names as a peer', async () => {
    const lock = JSON.parse(await readFile(new URL('package-lock.json', ROOT), 'utf8')) as {
      packages: Record<string, { version?: string }>;
    };
    const installed = Object.keys(lock.packages);
    expect(installed).toContain('node_modules/osls');
    expect(installed).toContain('node_modules/serverless-offline');
    expect(installed.filter((path) => /(^|\/)node_modules\/serverless$/.test(path))).toEqual([]);
    // npm would otherwise add the peer on the next install.
    expect(await readFile(new URL('.npmrc', ROOT), 'utf8')).toMatch(/^legacy-peer-deps=true$/m);
  });
});
