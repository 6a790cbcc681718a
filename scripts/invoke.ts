import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Context } from 'aws-lambda';
import { describeError } from '../lib/errors.ts';
import { exitWhenWritten, toleratePipeReadersLeaving } from './exit-when-written.ts';
import { startEmbeddedDefaults } from './local/embedded-defaults.ts';
import { loadLocalEnvFile } from './local/env-file.ts';
import { makeLogLineRouter } from './local/log-lines.ts';
import { findEventFile, functionNames, invokeTarget, s3LocationsOf, sampleEventNames } from './local/invoke-target.ts';

/**
 * `npm run invoke -- <function> <event.json>`: runs one handler (its TypeScript module, on Node 24)
 * with one sample event, on the same embedded defaults as `npm start`. The handler's log lines go to
 * stdout as they happen; the result follows as JSON. Exit 0 when the handler returned, 1 when it
 * threw, 2 for a usage error.
 */
toleratePipeReadersLeaving();
const root = fileURLToPath(new URL('..', import.meta.url));
const usageError = (message: string): never => {
  process.stderr.write(
    `invoke: ${message}\nusage: npm run invoke -- <function> <event: a JSON file, or a name under events/<function>/>\n`,
  );
  process.exit(2);
};

const [name, eventArg] = process.argv.slice(2);
const template = await readFile(join(root, 'serverless.yml'), 'utf8');
const names = functionNames(template);
if (name === undefined) usageError(`a function and an event are required (functions: ${names.join(', ')})`);
/** What a wrong name was probably meant to be: the function spelled the same but for case. */
const meant = (given: string): string => {
  const match = names.find((known) => known.toLowerCase() === given.toLowerCase());
  return match === undefined ? '' : `; did you mean "${match}"?`;
};
const target = invokeTarget(root, template, name!) ?? usageError(`unknown function "${name}" (known: ${names.join(', ')})${meant(name!)}`);
const samples = (): string => {
  const events = sampleEventNames(root, target.name);
  return events.length === 0 ? '' : `; events/${target.name}/ holds ${events.join(', ')}`;
};
if (eventArg === undefined) usageError(`an event is required${samples()}`);
const eventPath =
  findEventFile(root, target.name, eventArg!) ??
  usageError(`event file "${eventArg}" not found (looked as given, in events/ and in events/${target.name}/)${samples()}`);
let event: unknown;
try {
  event = JSON.parse(await readFile(eventPath, 'utf8'));
} catch (error) {
  usageError(`${eventPath} is not JSON: ${(error as Error).message}`);
}

try {
  loadLocalEnvFile(root);
} catch (error) {
  usageError((error as Error).message);
}
const locations = s3LocationsOf(event);
const defaults = await startEmbeddedDefaults(process.env, target.needs, { buckets: locations.buckets, chatSources: locations.sources });
if (defaults.notes.length > 0) process.stderr.write(`invoke: embedded defaults in use:\n${defaults.notes.join('\n')}\n`);
Object.assign(process.env, defaults.env);

const deadline = Date.now() + target.timeoutSeconds * 1_000;
const context: Context = {
  callbackWaitsForEmptyEventLoop: false,
  functionName: target.name,
  functionVersion: '$LATEST',
  invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${target.name}`,
  memoryLimitInMB: String(target.memoryMb),
  awsRequestId: randomUUID(),
  logGroupName: `/aws/lambda/${target.name}`,
  logStreamName: 'local',
  getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  done: () => undefined,
  fail: () => undefined,
  succeed: () => undefined,
};

// The handler's WARN and ERROR lines (written to stderr by Powertools) join its INFO lines on stdout.
const writeStderr = process.stderr.write.bind(process.stderr);
const stderrLines = makeLogLineRouter(
  (line) => void process.stdout.write(line),
  (text) => void writeStderr(text),
);
process.stderr.write = ((
  chunk: string | Uint8Array,
  encodingOrDone?: BufferEncoding | ((error?: Error | null) => void),
  done?: (error?: Error | null) => void,
) => {
  const encoding = typeof encodingOrDone === 'string' ? encodingOrDone : undefined;
  stderrLines.push(typeof chunk === 'string' && encoding !== undefined ? Buffer.from(chunk, encoding) : chunk);
  const callback = typeof encodingOrDone === 'function' ? encodingOrDone : done;
  if (callback !== undefined) queueMicrotask(() => callback(null));
  return true;
}) as typeof process.stderr.write;

// Lambda sets this for an on-demand function; Powertools reports `cold_start: true` only under it.
// Read when the handler's module creates its logger, so it is set before the import.
process.env.AWS_LAMBDA_INITIALIZATION_TYPE ??= 'on-demand';

let exitCode = 0;
try {
  const module = (await import(pathToFileURL(target.modulePath).href)) as Record<string, unknown>;
  const handler = module[target.exportName];
  if (typeof handler !== 'function') throw new Error(`${target.modulePath} exports no function "${target.exportName}"`);
  const result: unknown = await handler(event, context);
  process.stdout.write(`${JSON.stringify(result ?? null, null, 2)}\n`);
} catch (error) {
  exitCode = 1;
  process.stderr.write(`invoke: ${target.name} failed: ${describeError(error)}\n`);
} finally {
  await defaults.stop().catch(() => undefined);
  stderrLines.flush();
  // The real stream again: exitWhenWritten waits for what it holds, which the router's stand-in cannot tell.
  process.stderr.write = writeStderr;
}
// Handlers keep clients (HTTP keep-alive, SDK sockets) open, as they would in a warm Lambda.
await exitWhenWritten(exitCode);
