import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalStack, type LocalStack } from '../support/local-stack.ts';

const READY_TIMEOUT_MS = 150_000;
/** serverless-offline runs the refresh on the minute: the first run comes within a minute of ready. */
const FIRST_REFRESH_WITHIN_MS = 75_000;

const linesOf = (output: string, message: string): Record<string, unknown>[] =>
  output
    .split('\n')
    .filter((line) => line.startsWith('{') && line.includes(`"message":"${message}"`))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('npm start against a local TLS Redis Cluster with an ACL user (LOCAL_REDIS=cluster)', () => {
  let stack: LocalStack;

  beforeAll(async () => {
    stack = await startLocalStack({ env: { LOCAL_REDIS: 'cluster' }, readyTimeoutMs: READY_TIMEOUT_MS });
  }, READY_TIMEOUT_MS + 20_000);

  afterAll(async () => {
    await stack?.stop();
  }, 40_000);

  it('says in its banner which cluster it started, without the password', () => {
    expect(stack.output()).toMatch(/REDIS_URL\s+rediss:\/\/localhost:\d+ — local Redis Cluster/);
    expect(stack.output()).toMatch(/REDIS_TLS_CA_FILE\s+\S+ca\.pem/);
    expect(stack.output()).not.toMatch(/rediss:\/\/[^@\s]*:[^@\s]+@/);
  });

  it(
    'refreshes the demo inventory into the cluster on its schedule, and a new devices container serves it from there',
    async () => {
      let refreshes: Record<string, unknown>[] = [];
      const deadline = Date.now() + FIRST_REFRESH_WITHIN_MS;
      for (let attempt = 0; attempt < 200 && Date.now() < deadline && refreshes.length === 0; attempt += 1) {
        await sleep(500);
        refreshes = linesOf(stack.output(), 'devices refresh');
      }
      expect(refreshes[0]).toMatchObject({ outcome: 'refreshed', devices: 300 });

      // The devices function's first request: its memory is empty, the cluster holds the refreshed list.
      const response = await fetch(`${stack.url}/devices?limit=5`);
      expect(response.status).toBe(200);
      expect(response.headers.get('x-total-count')).toBe('300');
      expect(((await response.json()) as unknown[]).length).toBe(5);
      await sleep(200);
      const devicesLines = linesOf(stack.output(), 'request').filter((line) => line.path === '/devices');
      expect(devicesLines.map((line) => line.cache_tier)).toEqual(['cluster']);
      expect(stack.output()).not.toContain('cache tier degraded');
      expect(stack.output()).not.toMatch(/rediss:\/\/[^@\s]*:[^@\s]+@/);
    },
    FIRST_REFRESH_WITHIN_MS + 10_000,
  );
});
