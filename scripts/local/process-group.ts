import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * A child started as the leader of its own process group, so stopping it also stops whatever it
 * spawned (serverless-offline's esbuild service, worker processes) and a terminal's Ctrl-C, which
 * goes to our group only, is forwarded by us rather than racing us.
 */
export interface ProcessGroup {
  child: ChildProcess;
  pid: number;
  /** Resolves with the exit code (or the signal's name) when the leader exits. */
  exited: Promise<number | string>;
  /** SIGTERM to the group, then SIGKILL after `graceMs`; resolves once the leader has exited. */
  stop: (graceMs?: number) => Promise<void>;
}

const signalGroup = (pid: number, signal: NodeJS.Signals): void => {
  try {
    process.kill(-pid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
};

/** True while any process of the group is alive. */
const groupAlive = (pid: number): boolean => {
  try {
    process.kill(-pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

export const spawnGroup = (command: string, args: string[], options: SpawnOptions): ProcessGroup => {
  const child = spawn(command, args, { ...options, detached: true });
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown'));
    child.once('error', (error) => resolve(`failed to start: ${error.message}`));
  });
  if (child.pid === undefined) throw new Error(`could not start ${command}`);
  const pid = child.pid;
  let stopping: Promise<void> | undefined;
  const stop = (graceMs = 5_000): Promise<void> =>
    (stopping ??= (async () => {
      signalGroup(pid, 'SIGTERM');
      const deadline = Date.now() + graceMs;
      // The leader may exit before its children do; wait for the whole group, bounded.
      for (let attempt = 0; attempt < 1_000 && Date.now() < deadline && groupAlive(pid); attempt += 1) {
        await sleep(50);
      }
      if (groupAlive(pid)) signalGroup(pid, 'SIGKILL');
      await exited;
    })());
  return { child, pid, exited, stop };
};
