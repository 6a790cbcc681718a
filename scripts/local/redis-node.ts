import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LOOPBACK } from './ports.ts';
import { makeAdmin } from './redis-admin.ts';
import { installExitHook, liveDirs, terminate, type ServerProcess } from './redis-processes.ts';
import { startOnFreshPort } from './redis-server-start.ts';

export interface LocalRedisNode {
  /** redis://127.0.0.1:<port>, without TLS or password. */
  url: string;
  port: number;
  stop: () => Promise<void>;
}

/**
 * One plain `redis-server` on a free loopback port: no TLS, no password, no cluster, nothing persisted
 * (its folder is removed as a cluster's is: redis-cluster.ts).
 */
export const startLocalRedisNode = async (): Promise<LocalRedisNode> => {
  installExitHook();
  const root = await mkdtemp(join(tmpdir(), 'local-redis-'));
  liveDirs.add(root);
  const admin = makeAdmin({});
  let started: { server: ServerProcess; release: () => void } | undefined;
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      admin.closeAll();
      if (started) await terminate(started.server.child);
      started?.release();
      await rm(root, { recursive: true, force: true });
      liveDirs.delete(root);
    })());
  try {
    started = await startOnFreshPort(admin, false, async (port) => {
      const configFile = join(root, `redis-${port}.conf`);
      const config = [
        'port ' + String(port),
        `bind ${LOOPBACK}`,
        'daemonize no',
        'logfile ""',
        `dir ${root}`,
        'save ""',
        'appendonly no',
        '',
      ].join('\n');
      await writeFile(configFile, config, { mode: 0o600 });
      return configFile;
    });
    admin.closeAll();
    return { url: `redis://${LOOPBACK}:${started.server.port}`, port: started.server.port, stop };
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }
};
