import { setTimeout as sleep } from 'node:timers/promises';
import type { Admin } from './redis-admin.ts';
import { claimPorts } from './redis-ports.ts';
import { describeServer, exited, spawnServer, STOP_TIMEOUT_MS, waitForExit, type ServerProcess } from './redis-processes.ts';

const NODE_READY_TIMEOUT_MS = 10_000;

/** Starts one server on `port` from its configuration file and waits until it answers PING (with auth, over TLS where configured). */
export const startServer = async (port: number, configFile: string, admin: Admin): Promise<ServerProcess> => {
  const server = spawnServer(port, configFile);
  const deadline = Date.now() + NODE_READY_TIMEOUT_MS;
  let lastError = 'no answer yet';
  for (let attempt = 0; attempt < NODE_READY_TIMEOUT_MS / 25 && Date.now() < deadline && !exited(server.child); attempt += 1) {
    try {
      const client = await admin.client(port);
      if ((await client.ping()) === 'PONG') return server;
    } catch (error) {
      lastError = (error as Error).message;
    }
    await sleep(25);
  }
  admin.drop(port);
  server.child.kill('SIGKILL');
  await waitForExit(server.child, STOP_TIMEOUT_MS);
  throw new Error(`redis-server on port ${port} did not become ready (${lastError}):\n${describeServer(server)}`);
};

/**
 * Starts a server on a fresh port (pair) from the configuration `configFor` writes, trying another
 * port when one was taken between the check and the bind.
 */
export const startOnFreshPort = async (
  admin: Admin,
  busPort: boolean,
  configFor: (port: number) => Promise<string>,
): Promise<{ server: ServerProcess; release: () => void }> => {
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const { port, release } = await claimPorts(busPort);
    try {
      return { server: await startServer(port, await configFor(port), admin), release };
    } catch (error) {
      release();
      lastError = error;
    }
  }
  throw lastError;
};
