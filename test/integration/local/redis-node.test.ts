import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { isPortFree } from '../../../scripts/local/ports.ts';
import { startLocalRedisNode } from '../../../scripts/local/redis-node.ts';

describe('startLocalRedisNode', () => {
  it('runs one plain redis-server (no TLS, no password) until stopped', async () => {
    const node = await startLocalRedisNode();
    try {
      expect(node.url).toBe(`redis://127.0.0.1:${node.port}`);
      const client = new Redis(node.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
      client.on('error', () => undefined);
      await client.connect();
      expect(await client.ping()).toBe('PONG');
      expect(await client.call('CLUSTER', 'INFO').catch((error: Error) => error.message)).toMatch(/cluster support disabled/);
      client.disconnect();
    } finally {
      await node.stop();
    }
    expect(await isPortFree(node.port)).toBe(true);
  });
});
