import { setTimeout as sleep } from 'node:timers/promises';
import { failing, infoField, parseNodes, slotMap, SLOT_COUNT } from './cluster-replies.ts';
import type { Ask } from './redis-admin.ts';
import type { ServerProcess } from './redis-processes.ts';

const POLL_MS = 50;

/**
 * Polls `check` (undefined: done; a string: what is still missing) every POLL_MS until it is done,
 * bounded by `timeoutMs` and a number of attempts; a check that throws counts as not done.
 */
export const waitFor = async (
  timeoutMs: number,
  what: string,
  check: () => Promise<string | undefined>,
  describe: () => string,
): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  const maxAttempts = Math.ceil(timeoutMs / POLL_MS) + 1;
  let last = 'not checked yet';
  for (let attempt = 0; attempt < maxAttempts; attempt += 1) {
    try {
      const missing = await check();
      if (missing === undefined) return;
      last = missing;
    } catch (error) {
      last = (error as Error).message;
    }
    if (Date.now() >= deadline) break;
    await sleep(POLL_MS);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}: ${last}\n${describe()}`);
};

/**
 * undefined when healthy, else what is not (see `LocalRedisCluster.waitUntilHealthy`), as the nodes
 * `up` (the running ones) see the cluster.
 */
export const unhealthy = async (up: ServerProcess[], ask: Ask): Promise<string | undefined> => {
  if (up.length === 0) return 'no node is running';
  const upPorts = new Set(up.map((server) => server.port));
  let agreed: string | undefined;
  for (const { port } of up) {
    const [info, nodesText] = await Promise.all([ask(port, 'CLUSTER', 'INFO'), ask(port, 'CLUSTER', 'NODES')]);
    if (infoField(info, 'cluster_state') !== 'ok') return `node ${port} says cluster_state:${infoField(info, 'cluster_state')}`;
    const view = parseNodes(nodesText);
    const flagged = view.find((line) => upPorts.has(line.port) && failing(line));
    if (flagged) return `node ${port} flags node ${flagged.port} as ${flagged.flags.join(',')}`;
    const map = slotMap(view);
    if (map.covered !== SLOT_COUNT) return `node ${port} sees ${map.covered} of ${SLOT_COUNT} slots served`;
    const gone = [...map.owners].find((owner) => !upPorts.has(owner));
    if (gone !== undefined) return `node ${port} still routes slots to node ${gone}, which is down`;
    if (agreed !== undefined && map.text !== agreed) return `nodes disagree on the slots: ${agreed} / ${map.text}`;
    agreed = map.text;
    const myself = view.find((line) => line.flags.includes('myself'));
    if (myself?.role === 'replica') {
      const link = infoField(await ask(port, 'INFO', 'replication'), 'master_link_status');
      if (link !== 'up') return `replica ${port}'s link to its master is ${link ?? 'unknown'}`;
    }
  }
  return undefined;
};
