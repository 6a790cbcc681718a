import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

describe('openapi.yaml', () => {
  it('passes Redocly CLI lint with every recommended rule as an error (redocly.yaml)', () => {
    const result = spawnSync(process.execPath, ['node_modules/@redocly/cli/bin/cli.js', 'lint', 'openapi.yaml', '--format=stylish'], {
      cwd: ROOT,
      encoding: 'utf8',
      // No telemetry or update check from the linter: tests reach nothing beyond loopback.
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', CI: 'true' },
      timeout: 60_000,
    });
    expect(`${result.stdout}\n${result.stderr}`, 'redocly lint output').not.toMatch(/\berror\b/);
    expect(result.status).toBe(0);
  });
});
