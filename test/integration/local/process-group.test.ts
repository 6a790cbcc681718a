import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { spawnGroup } from '../../../scripts/local/process-group.ts';
import { groupAlive } from '../../support/process-groups.ts';

/** A leader that starts a grandchild and prints its pid, like osls starting esbuild. */
const LEADER = `
const { spawn } = require('node:child_process');
const grandchild = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
console.log(grandchild.pid);
setInterval(() => {}, 1000);
`;

const IGNORES_SIGTERM = `process.on('SIGTERM', () => {}); console.log(process.pid); setInterval(() => {}, 1000);`;

const firstLine = async (group: ReturnType<typeof spawnGroup>): Promise<number> => {
  let text = '';
  group.child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  for (let attempt = 0; attempt < 100 && !text.includes('\n'); attempt += 1) await sleep(50);
  return Number(text.trim().split('\n')[0]);
};

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('spawnGroup', () => {
  it('stops the leader and what it spawned, and reports the group gone', async () => {
    const group = spawnGroup(process.execPath, ['-e', LEADER], { stdio: ['ignore', 'pipe', 'ignore'] });
    const grandchild = await firstLine(group);
    expect(alive(grandchild)).toBe(true);
    expect(groupAlive(group.pid)).toBe(true);
    await group.stop(2_000);
    expect(groupAlive(group.pid)).toBe(false);
    expect(alive(grandchild)).toBe(false);
  });

  it('kills a group that ignores SIGTERM once the grace period is over', async () => {
    const group = spawnGroup(process.execPath, ['-e', IGNORES_SIGTERM], { stdio: ['ignore', 'pipe', 'ignore'] });
    await firstLine(group);
    await group.stop(300);
    expect(await group.exited).toBe('SIGKILL');
    expect(groupAlive(group.pid)).toBe(false);
  });

  it('resolves exited with the exit code of a leader that ends by itself', async () => {
    const group = spawnGroup(process.execPath, ['-e', 'process.exit(3)'], { stdio: 'ignore' });
    expect(await group.exited).toBe(3);
  });
});
