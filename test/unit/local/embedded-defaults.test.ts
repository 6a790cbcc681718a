import { describe, expect, it } from 'vitest';
import { describeConfigured } from '../../../scripts/local/embedded-defaults.ts';

describe('describeConfigured (the banner lines for variables from the environment)', () => {
  it('shows non-secret values and only "(set)" for secrets', () => {
    const lines = describeConfigured(
      { INVENTORY_URL: 'https://jamf.example.com', INVENTORY_CLIENT_SECRET: 'hunter2', TICKETING_PASSWORD: 'pw' },
      ['INVENTORY_URL', 'INVENTORY_CLIENT_SECRET', 'TICKETING_PASSWORD', 'REDIS_URL'],
    );
    expect(lines).toHaveLength(3);
    expect(lines.join('\n')).toContain('https://jamf.example.com');
    expect(lines.join('\n')).not.toMatch(/hunter2|\bpw\b/);
  });
});
