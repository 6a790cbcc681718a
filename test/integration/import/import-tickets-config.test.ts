import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../lib/errors.ts';
import { captureStdout } from '../../support/capture-logs.ts';
import { lambdaContext } from '../../support/http-events.ts';

const savedEnv = { ...process.env };

beforeAll(() => {
  // A listing URL without its user: the container must name the missing variable.
  for (const name of Object.keys(process.env)) if (name.startsWith('TICKETING_')) delete process.env[name];
  process.env.TICKETING_URL = 'http://127.0.0.1:9';
  process.env.TICKETING_PASSWORD = 'never-logged-secret';
});
afterAll(() => {
  process.env = savedEnv;
});

describe('importTickets handler configuration', () => {
  it('names TICKETING_USERNAME in its log when the container starts, and fails every invocation with it, never logging the password', async () => {
    const logs = captureStdout();
    try {
      // The container starts: its module loads under this environment.
      const { handler } = await import('../../../functions/import-tickets.ts');
      expect(logs.errorLines().filter((line) => line.message === 'configuration error at startup')).toEqual([
        expect.objectContaining({
          variable: 'TICKETING_USERNAME',
          error: 'Configuration error: TICKETING_USERNAME is required but not set',
        }),
      ]);
      const event = { source: 's3://import-local/input/chat.csv', destination: 's3://import-local/output/tickets.tar' };
      for (let invocation = 0; invocation < 2; invocation += 1) {
        const error = await handler(event, lambdaContext()).then(
          () => undefined,
          (caught: unknown) => caught,
        );
        expect(error).toBeInstanceOf(ConfigError);
        expect((error as ConfigError).variable).toBe('TICKETING_USERNAME');
      }
    } finally {
      logs.restore();
    }
    expect(logs.raw()).toContain('Configuration error: TICKETING_USERNAME is required but not set');
    expect(logs.raw()).not.toContain('never-logged-secret');
  });
});
