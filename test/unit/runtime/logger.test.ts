import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../lib/errors.ts';
import { checkConfigAtStartup } from '../../../lib/runtime/logger.ts';

const recorder = () => {
  const lines: { message: string; fields: Record<string, unknown> }[] = [];
  return { lines, logger: { error: (message: string, fields: Record<string, unknown>) => void lines.push({ message, fields }) } };
};

describe('checkConfigAtStartup', () => {
  it('logs a missing variable by name once, without throwing', () => {
    const { lines, logger } = recorder();
    expect(() =>
      checkConfigAtStartup(logger, () => {
        throw new ConfigError('USERS_TABLE', 'is required but not set');
      }),
    ).not.toThrow();
    expect(lines).toEqual([
      {
        message: 'configuration error at startup',
        fields: { variable: 'USERS_TABLE', error: 'Configuration error: USERS_TABLE is required but not set' },
      },
    ]);
  });

  it('writes nothing when the configuration loads', () => {
    const { lines, logger } = recorder();
    checkConfigAtStartup(logger, () => ({ ok: true }));
    expect(lines).toEqual([]);
  });

  it('reports any other init failure without throwing', () => {
    const { lines, logger } = recorder();
    checkConfigAtStartup(logger, () => {
      throw new TypeError('client construction failed');
    });
    expect(lines).toEqual([{ message: 'startup check failed', fields: { error: 'TypeError: client construction failed' } }]);
  });
});
