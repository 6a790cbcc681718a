import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { CONFIGURATION_VARIABLES } from '../../scripts/local/offline-command.ts';
import { freePort } from './free-port.ts';
import { groupAlive } from './process-groups.ts';

/**
 * The local stack (`npm start`, or the script it runs) as a child in its own process group on a free
 * port, with no .env and no configuration variable set, so every embedded default is in use. For tests
 * and benchmarks (no vitest imports). Linux only: memory is read from /proc.
 */
export interface LocalStack {
  url: string;
  /** The started command's process group: npm and scripts/start.ts (which hosts the embedded defaults). */
  group: number;
  /** serverless-offline, the emulator: leader of its own process group (handlers run in its worker threads). */
  emulator: number;
  /** The stack's output so far (after ready, only its last part). */
  output: () => string;
  errors: () => string;
  /** The started command's exit code, or its signal's name. */
  exited: Promise<number | string>;
  /** SIGINT to the group, as Ctrl-C does; SIGKILL to both groups if they are not gone after `graceMs`. */
  stop: (graceMs?: number) => Promise<number | string>;
}

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Output kept once the stack is ready: it writes one access-log line per request. */
const OUTPUT_TAIL_CHARS = 200_000;

export interface StartOptions {
  /** Run `npm start` itself (default) rather than `node scripts/start.ts`. */
  viaNpm?: boolean;
  /** Added to the environment, e.g. NODE_OPTIONS. */
  env?: Record<string, string>;
  readyTimeoutMs?: number;
}

const npmCommand = (): [string, string[]] => {
  const cli = process.env.npm_execpath;
  // Under `npm run`, the npm that runs us; otherwise the one on PATH.
  return cli !== undefined && /npm-cli\.[cm]?js$/.test(cli) ? [process.execPath, [cli, 'start']] : ['npm', ['start']];
};

const killGroup = (group: number): void => {
  try {
    process.kill(-group, 'SIGKILL');
  } catch {
    // already gone
  }
};

export const startLocalStack = async (options: StartOptions = {}): Promise<LocalStack> => {
  const port = await freePort();
  const env: Record<string, string | undefined> = { ...process.env };
  // The developer's own configuration (and their choice of a local Redis) stays out; the test's own applies.
  for (const name of [...CONFIGURATION_VARIABLES, 'LOCAL_REDIS']) delete env[name];
  Object.assign(env, { PORT: String(port), LOCAL_ENV_FILE: '', ...options.env });
  // `npm start` runs `node`: Node 24 from the `node` devDependency, as under `npm run`.
  env.PATH = [join(ROOT, 'node_modules', '.bin'), env.PATH ?? ''].join(delimiter);
  const [command, args] = options.viaNpm === false ? [process.execPath, ['scripts/start.ts']] : npmCommand();
  const child = spawn(command, args, { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown'));
    child.once('error', (error) => resolve(`failed to start: ${error.message}`));
  });
  if (child.pid === undefined) throw new Error(`could not start ${command}`);
  const group = child.pid;
  let ready = false;
  let output = '';
  let errors = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
    if (ready && output.length > 2 * OUTPUT_TAIL_CHARS) output = output.slice(-OUTPUT_TAIL_CHARS);
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    errors = (errors + chunk.toString('utf8')).slice(-OUTPUT_TAIL_CHARS);
  });

  const stopOnce = { promise: undefined as Promise<number | string> | undefined };
  const stop = (graceMs = 25_000): Promise<number | string> =>
    (stopOnce.promise ??= (async () => {
      const emulatorGroup = Number(/serverless-offline starting \(process group (\d+)\)/.exec(output)?.[1]);
      try {
        process.kill(-group, 'SIGINT');
      } catch {
        // already gone
      }
      const code = await Promise.race([exited, sleep(graceMs).then(() => 'still running' as const)]);
      const groups = [group, emulatorGroup].filter((pid) => Number.isInteger(pid) && pid > 0);
      for (let attempt = 0; attempt < 50 && groups.some(groupAlive); attempt += 1) await sleep(100);
      for (const pid of groups) if (groupAlive(pid)) killGroup(pid);
      return code;
    })());

  const deadline = Date.now() + (options.readyTimeoutMs ?? 150_000);
  let exitCode: number | string | undefined;
  void exited.then((code) => (exitCode = code));
  for (let attempt = 0; attempt < 100_000 && Date.now() < deadline; attempt += 1) {
    const url = /^ready: (http:\/\/\S+)$/m.exec(output)?.[1];
    if (url !== undefined) {
      ready = true;
      const emulator = Number(/serverless-offline starting \(process group (\d+)\)/.exec(output)?.[1]);
      return { url, group, emulator, output: () => output, errors: () => errors, exited, stop };
    }
    if (exitCode !== undefined) throw new Error(`the stack exited (${exitCode}) before it was ready:\n${errors}\n${output.slice(-3_000)}`);
    await sleep(200);
  }
  await stop(5_000);
  throw new Error(`the stack was not ready within ${options.readyTimeoutMs ?? 150_000} ms:\n${errors}\n${output.slice(-3_000)}`);
};

/** Every live process of a process group, from /proc. */
export const processGroupMembers = (group: number): number[] => {
  const members: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The command name (field 2) may hold spaces and parentheses: state, ppid, pgrp follow its last ')'.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === group) members.push(Number(entry));
    } catch {
      // ended meanwhile
    }
  }
  return members;
};

/** A process's resident set in kB (VmRSS), or undefined once it is gone (a zombie has none). */
export const residentKb = (pid: number): number | undefined => {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
};

export interface StackMemory {
  /** Sum over every process of both groups (npm, start.ts with the embedded defaults, serverless-offline, esbuild). */
  stackMb: number;
  /** serverless-offline's own process (its worker threads included). */
  emulatorMb: number | undefined;
  processes: number;
}

export const stackMemory = (stack: Pick<LocalStack, 'group' | 'emulator'>): StackMemory => {
  const pids = [...new Set([...processGroupMembers(stack.group), ...processGroupMembers(stack.emulator)])];
  const kb = pids.map(residentKb).filter((value): value is number => value !== undefined);
  const emulatorKb = residentKb(stack.emulator);
  return {
    stackMb: kb.reduce((sum, value) => sum + value, 0) / 1024,
    emulatorMb: emulatorKb === undefined ? undefined : emulatorKb / 1024,
    processes: kb.length,
  };
};
