import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import { stackMemory, startLocalStack, type LocalStack, type StackMemory } from '../test/support/local-stack.ts';

/**
 * The local stack under load, through `npm start` on embedded defaults: two rounds of GET /devices,
 * then two of POST /api/users (a new email per request), each with 16 connections for a fixed time.
 * Per round: requests/s, p50/p99 latency, and the resident memory of the stack's processes (both
 * process groups summed, and serverless-offline's own process) sampled during and after the round.
 * The figures before any load are the baseline. The first round on a route grows the emulator by a
 * worker thread (~40 MB) per instance it starts, one per request in flight; the second round shows
 * what it keeps per request, which should be little: it holds an invocation's result only until the
 * response is sent (docs/local-stack.md).
 *
 * BENCH_LOCAL_STACK_SECONDS (default 10) and BENCH_LOCAL_STACK_CONNECTIONS (default 16) change the
 * load; the stack listens on 127.0.0.1 only.
 */
const positive = (variable: string, fallback: number): number => {
  const value = Number(process.env[variable] ?? fallback);
  if (!Number.isInteger(value) || value < 1 || value > 3_600) throw new Error(`${variable} must be a whole number from 1 to 3600`);
  return value;
};
const SECONDS = positive('BENCH_LOCAL_STACK_SECONDS', 10);
const CONNECTIONS = positive('BENCH_LOCAL_STACK_CONNECTIONS', 16);
const SAMPLE_EVERY_MS = 500;
/** Longer than the function timeout (29 s), so one stuck request is reported rather than waited out. */
const REQUEST_TIMEOUT_S = 35;
const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json' };

interface Round {
  label: string;
  expectStatus: number;
  request: autocannon.Request;
}

interface RoundFigures {
  label: string;
  result: autocannon.Result;
  expected: number;
  peak: StackMemory;
  after: StackMemory;
}

/** autocannon for SECONDS, stopped outright if it overruns by far (a hung connection). */
const load = (url: string, request: autocannon.Request): Promise<autocannon.Result> =>
  new Promise((resolve, reject) => {
    const instance = autocannon(
      { url, connections: CONNECTIONS, duration: SECONDS, timeout: REQUEST_TIMEOUT_S, requests: [request] },
      (error, result) => {
        clearTimeout(guard);
        if (error) reject(error as Error);
        else resolve(result);
      },
    );
    const guard = setTimeout(() => instance.stop(), (SECONDS + REQUEST_TIMEOUT_S + 5) * 1000);
  });

const larger = (a: StackMemory, b: StackMemory): StackMemory => ({
  stackMb: Math.max(a.stackMb, b.stackMb),
  emulatorMb: Math.max(a.emulatorMb ?? 0, b.emulatorMb ?? 0),
  processes: Math.max(a.processes, b.processes),
});

const runRound = async (stack: LocalStack, round: Round): Promise<RoundFigures> => {
  let peak = stackMemory(stack);
  const sampler = setInterval(() => (peak = larger(peak, stackMemory(stack))), SAMPLE_EVERY_MS);
  try {
    const result = await load(stack.url, round.request);
    const expected = result.statusCodeStats?.[`${round.expectStatus}`]?.count ?? 0;
    return { label: round.label, result, expected, peak, after: stackMemory(stack) };
  } finally {
    clearInterval(sampler);
  }
};

const mb = (value: number | undefined) => (value === undefined ? 'gone' : `${value.toFixed(0)} MB`);

export const run = async (): Promise<void> => {
  const stack = await startLocalStack();
  try {
    // One request per route first: the figures then start from warm bundles, not from bundling.
    await (await fetch(`${stack.url}/devices`)).arrayBuffer();
    await (
      await fetch(`${stack.url}/api/users`, {
        method: 'POST',
        headers: JSON_HEADERS,
        body: JSON.stringify({ email: `warm.${randomUUID()}@example.com`, firstName: 'A', lastName: 'B' }),
      })
    ).arrayBuffer();
    const baseline = stackMemory(stack);

    const tag = randomUUID().slice(0, 8);
    let serial = 0;
    const devices: Round = {
      label: 'GET /devices',
      expectStatus: 200,
      request: { method: 'GET', path: '/devices', headers: { accept: 'application/json' } },
    };
    const users: Round = {
      label: 'POST /api/users',
      expectStatus: 201,
      request: {
        method: 'POST',
        path: '/api/users',
        headers: JSON_HEADERS,
        setupRequest: (request) => ({
          ...request,
          body: JSON.stringify({ email: `load.${tag}.${(serial += 1)}@example.com`, firstName: 'A', lastName: 'B' }),
        }),
      },
    };

    const rounds: RoundFigures[] = [];
    for (const [index, round] of [devices, devices, users, users].entries()) {
      rounds.push(await runRound(stack, { ...round, label: `${round.label} #${(index % 2) + 1}` }));
    }

    process.stdout.write(
      `npm start on embedded defaults, ${CONNECTIONS} connections × ${SECONDS} s per round; ` +
        `before load (one request per route): stack ${mb(baseline.stackMb)} in ${baseline.processes} processes, emulator ${mb(baseline.emulatorMb)}\n`,
    );
    process.stdout.write(
      '| round | requests | expected status | other / errors / timeouts | req/s | p50 | p99 | emulator RSS peak | after | stack RSS after | after ÷ before (emulator) |\n' +
        '|---|---|---|---|---|---|---|---|---|---|---|\n',
    );
    for (const { label, result, expected, peak, after } of rounds) {
      const others = result.requests.total - expected;
      process.stdout.write(
        `| ${label} | ${result.requests.total} | ${expected} | ${others} / ${result.errors} / ${result.timeouts} | ${result.requests.average.toFixed(0)} | ` +
          `${result.latency.p50} ms | ${result.latency.p99} ms | ${mb(peak.emulatorMb)} | ${mb(after.emulatorMb)} | ${mb(after.stackMb)} | ` +
          `${after.emulatorMb === undefined || baseline.emulatorMb === undefined ? '-' : `${(after.emulatorMb / baseline.emulatorMb).toFixed(2)}×`} |\n`,
      );
    }
  } finally {
    // Ctrl-C: npm itself ends on the signal; the stack says `stopped` once everything it started is down.
    const code = await stack.stop();
    if (!/^stopped$/m.test(stack.output()))
      process.stdout.write(`the stack did not stop cleanly (${code}):\n${stack.errors().slice(-2_000)}\n`);
  }
};
