import { once } from 'node:events';
import { realpathSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { describeConfigured } from './local/embedded-banner.ts';
import { startEmbeddedDefaults } from './local/embedded-defaults.ts';
import { ALL_SERVICES } from './local/embedded-plan.ts';
import { loadLocalEnvFile } from './local/env-file.ts';
import { makeLogLineRouter, type LineRouter } from './local/log-lines.ts';
import { CONFIGURATION_VARIABLES, offlineCommand } from './local/offline-command.ts';
import { paramVariables, templateWithParams } from './local/offline-params.ts';
import { isPortFree, LOOPBACK, parsePort } from './local/ports.ts';
import { spawnGroup, type ProcessGroup } from './local/process-group.ts';
import { createShadowService, type ShadowService } from './local/shadow-service.ts';
import { describeStartupFailure, makeStartupFailureScanner } from './local/startup-failure.ts';
import { waitForApi } from './local/wait-for-api.ts';

/** `npm start`: the whole HTTP API through serverless-offline on 127.0.0.1:$PORT, on embedded defaults (docs/local-stack.md). */
const root = fileURLToPath(new URL('..', import.meta.url));
const READY_TIMEOUT_MS = 180_000;
const SHUTDOWN_LIMIT_MS = 15_000;
/** After serverless-offline is gone, how long its last output may take to come through. */
const OUTPUT_DRAIN_MS = 1_000;

const say = (line: string) => process.stdout.write(`${line}\n`);
const fail = (message: string): never => {
  process.stderr.write(`start: ${message}\n`);
  process.exit(1);
};

const [envFile, port] = (() => {
  try {
    return [loadLocalEnvFile(root), parsePort(process.env.PORT, 3000)] as const;
  } catch (error) {
    return fail((error as Error).message);
  }
})();
const url = `http://${LOOPBACK}:${port}`;

// Before anything starts: a busy port is a clear, immediate failure.
if (!(await isPortFree(port).catch((error: unknown) => fail((error as Error).message)))) {
  fail(`port ${port} on ${LOOPBACK} is already in use (another \`npm start\`?). Stop it or choose another port: PORT=<port> npm start`);
}

const defaults = await startEmbeddedDefaults(process.env, ALL_SERVICES).catch((error: unknown) =>
  fail(`could not start the embedded defaults: ${(error as Error).message}`),
);
// Filled in as they start, so a signal at any point stops exactly what is running.
const running: { shadow?: ShadowService; osls?: ProcessGroup } = {};
let stopping: Promise<never> | undefined;

/** Lets what serverless-offline wrote just before it stopped reach our output, bounded. */
const drainOutput = async (): Promise<void> => {
  const streams = [running.osls?.child.stdout, running.osls?.child.stderr].filter((stream) => stream != null && !stream.readableEnded);
  await Promise.race([Promise.all(streams.map((stream) => once(stream!, 'end').catch(() => undefined))), sleep(OUTPUT_DRAIN_MS)]);
};
/** Stops everything once (later calls, e.g. a second Ctrl-C, wait for the same stop), bounded in time. */
const shutdown = (reason: string, exitCode: number): Promise<never> =>
  (stopping ??= (async () => {
    say(`stopping (${reason})…`);
    setTimeout(() => process.exit(exitCode || 1), SHUTDOWN_LIMIT_MS).unref();
    await running.osls?.stop().catch(() => undefined);
    await drainOutput();
    await defaults
      .stop()
      .catch((error: unknown) => process.stderr.write(`start: stopping a local server failed: ${(error as Error).message}\n`));
    await running.shadow?.remove().catch(() => undefined);
    say('stopped');
    return process.exit(exitCode);
  })());
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void shutdown(signal, 0));
// `npm start` runs us under a shell that does not pass signals on; if it goes, so do we (and our children).
const parentPid = process.ppid;
setInterval(() => {
  if (process.ppid !== parentPid) void shutdown('parent process exited', 0);
}, 1_000).unref();

say(`local stack${envFile ? ` (variables from ${envFile} and the environment)` : ''}; defaults in use — set the variable to replace one:`);
for (const line of defaults.notes) say(line);
// A variable a default replaced (LATEST_OS_FEED_URL=demo) has its line among the notes already.
for (const line of describeConfigured(
  process.env,
  CONFIGURATION_VARIABLES.filter((name) => !(name in defaults.env)),
))
  say(line);

const env = { ...process.env, ...defaults.env };
const template = await readFile(join(root, 'serverless.yml'), 'utf8');
let descriptor = template;
try {
  descriptor = templateWithParams(template, paramVariables(template), env);
} catch (error) {
  process.stderr.write(`start: ${(error as Error).message}\n`);
  await shutdown('serverless.yml', 1);
}
const shadow = (running.shadow = await createShadowService(root, `device-users-offline-${port}`, descriptor));
const command = offlineCommand({ root, port, env });
// A signal that came while we were getting ready: start nothing more (the stop under way exits).
if (stopping) await stopping;
const osls = (running.osls = spawnGroup(command.executable, command.args, {
  cwd: shadow.dir,
  env: command.env,
  stdio: ['ignore', 'pipe', 'pipe'],
}));
say(`serverless-offline starting (process group ${osls.pid}); bundling with esbuild…`);
let ready = false;
/** Passes serverless-offline's output through `pass`, watching it until ready for a failed start. */
const relay = (source: Readable, pass: LineRouter): void => {
  source.on('data', pass.push);
  source.on('end', pass.flush);
  const scanner = makeStartupFailureScanner();
  source.on('data', (chunk: Buffer) => {
    // After ready a failed rebuild (live reload) is the developer's to see; the last good bundle keeps serving.
    if (ready || stopping) return;
    const failure = scanner.push(chunk);
    if (failure === undefined) return;
    process.stderr.write(`start: ${describeStartupFailure(failure, (path) => relative(realpathSync(root), resolve(shadow.dir, path)))}\n`);
    void shutdown(failure.kind === 'bundling' ? 'bundling failed' : 'serverless-offline failed', 1);
  });
};
const toStdout = (text: string) => void process.stdout.write(text);
relay(osls.child.stdout!, { push: (chunk) => void process.stdout.write(chunk), flush: () => undefined });
// Handler log lines reach stdout whatever their level (WARN and ERROR come on stderr).
relay(
  osls.child.stderr!,
  makeLogLineRouter(toStdout, (text) => void process.stderr.write(text)),
);
void osls.exited.then((code) => {
  if (!stopping) void shutdown(`serverless-offline exited (${code})`, 1);
});

const outcome = await waitForApi(url, { timeoutMs: READY_TIMEOUT_MS, gaveUp: () => stopping !== undefined });
if (outcome === 'timeout') await shutdown(`the API did not answer within ${READY_TIMEOUT_MS / 1000} s`, 1);
if (outcome === 'ready') {
  ready = true;
  say(`ready: ${url}`);
}
