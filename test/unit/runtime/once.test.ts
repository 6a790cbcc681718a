import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../lib/errors.ts';
import { once } from '../../../lib/runtime/once.ts';

describe('once', () => {
  it('loads once and remembers a failure so every request answers the same', () => {
    let calls = 0;
    const failing = once(() => {
      calls += 1;
      throw new ConfigError('X', 'is required but not set');
    });
    expect(failing).toThrow(ConfigError);
    expect(failing).toThrow(ConfigError);
    expect(calls).toBe(1);
  });
});
