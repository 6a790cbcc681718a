import { createServer } from 'node:net';

/**
 * A loopback port that was free a moment ago (the OS's pick), for tests and benchmarks that must
 * name a port up front (no vitest imports).
 */
export const freePort = (host = '127.0.0.1'): Promise<number> =>
  new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen({ port: 0, host }, () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
