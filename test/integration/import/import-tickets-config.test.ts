import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { handler } from '../../../functions/import-tickets.ts';
import { ConfigError } from '../../../lib/errors.ts';
import { captureStdout, type CapturedLogs } from '../../support/capture-logs.ts';
import { lambdaContext } from '../../support/http-events.ts';

const savedEnv = { ...process.env };
let logs: CapturedLogs;

beforeAll(() => {
  // A listing URL without its user: the first invocation must name the missing variable.
  for (const name of Object.keys(process.env)) if (name.startsWith('TICKETING_')) delete process.env[name];
  process.env.TICKETING_URL = 'http://127.0.0.1:9';
  process.env.TICKETING_PASSWORD = 'never-logged-secret';
});
afterAll(() => {
  process.env = savedEnv;
});
beforeEach(() => {
  logs = captureStdout();
});
afterEach(() => {
  logs.restore();
});

describe('importTickets handler configuration', () => {
  it('fails every invocation with a ConfigError naming TICKETING_USERNAME, logged without the password', async () => {
    const event = { source: 's3://import-local/input/chat.csv', destination: 's3://import-local/output/tickets.tar' };
    for (let invocation = 0; invocation < 2; invocation += 1) {
      const error = await handler(event, lambdaContext()).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).variable).toBe('TICKETING_USERNAME');
    }
    expect(logs.raw()).toContain('Configuration error: TICKETING_USERNAME is required but not set');
    expect(logs.raw()).not.toContain('never-logged-secret');
  });
});
