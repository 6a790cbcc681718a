import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stackMemory, startLocalStack, type LocalStack } from '../support/local-stack.ts';

/**
 * serverless-offline 14.8.2 races each invocation against a timer that it never cleared, which kept
 * every response reachable for the function's whole timeout (29 s): under load the emulator's heap
 * grew with the request rate until it ran out (docs/local-stack.md). Here the emulator's heap
 * is capped (NODE_OPTIONS reaches it through `npm start`), so that retention ends it with "heap out
 * of memory" within the run — measured: dead after ~650 responses at this cap, and after ~1,400 at
 * 256 MB — while a fixed emulator serves every request, even at 96 MB. No timing is asserted.
 */
const HEAP_CAP_MB = 160;
const REQUESTS = 2_000;
const IN_FLIGHT = 16;
/**
 * The emulator keeps one worker thread per instance it needed (one per request in flight here, each
 * ~40 MB with its own heap) beside its main thread: ~280 MB when ready and ~930 MB after this run.
 */
const EMULATOR_RSS_BOUND_MB = 1_250;
const SETTLE_MS = 3_000;
/** Bounds for a hung stack, not expectations: the run takes well under a minute. */
const REQUEST_TIMEOUT_MS = 35_000;
const DRIVE_LIMIT_MS = 150_000;
const READY_TIMEOUT_MS = 150_000;

describe('npm start under sustained load', () => {
  let stack: LocalStack;

  beforeAll(async () => {
    const inherited = process.env.NODE_OPTIONS ?? '';
    stack = await startLocalStack({
      viaNpm: false,
      env: { NODE_OPTIONS: `${inherited} --max-old-space-size=${HEAP_CAP_MB}`.trim() },
      readyTimeoutMs: READY_TIMEOUT_MS,
    });
  }, READY_TIMEOUT_MS + 20_000);

  afterAll(async () => {
    await stack?.stop();
  }, 40_000);

  it(
    `serves ${REQUESTS} GET /devices, ${IN_FLIGHT} in flight, with the emulator's heap capped at ${HEAP_CAP_MB} MB, and its memory stays bounded`,
    async () => {
      expect(Number.isInteger(stack.emulator)).toBe(true);
      const atReady = stackMemory(stack);
      const statuses = new Map<string, number>();
      const count = (key: string) => statuses.set(key, (statuses.get(key) ?? 0) + 1);
      let exited = false;
      void stack.exited.then(() => (exited = true));
      const deadline = Date.now() + DRIVE_LIMIT_MS;
      let started = 0;
      let failures = 0;
      const worker = async () => {
        // Stops early once the stack is gone (or keeps failing): the rest would only fail the same way.
        while (started < REQUESTS && !exited && failures < 50 && Date.now() < deadline) {
          started += 1;
          try {
            const response = await fetch(`${stack.url}/devices`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
            await response.arrayBuffer();
            count(String(response.status));
            if (response.status !== 200) failures += 1;
          } catch (error) {
            count((error as Error).name);
            failures += 1;
          }
        }
      };
      await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
      await sleep(SETTLE_MS);
      const after = stackMemory(stack);

      const heapExhausted = /heap out of memory|Reached heap limit/i.test(stack.errors());
      const summary =
        `responses ${JSON.stringify(Object.fromEntries(statuses))} of ${started} started; emulator RSS ${atReady.emulatorMb?.toFixed(0)} MB at ready, ` +
        `${after.emulatorMb === undefined ? 'gone' : `${after.emulatorMb.toFixed(0)} MB`} after; stack exited: ${exited}; heap exhausted: ${heapExhausted}` +
        (exited || heapExhausted
          ? `\n${stack
              .output()
              .split('\n')
              .filter((line) => /^(stopping|start:)/.test(line))
              .join('\n')}\n${stack.errors().slice(-1_500)}`
          : '');
      expect(exited, summary).toBe(false);
      expect(heapExhausted, summary).toBe(false);
      expect(statuses.get('200'), summary).toBe(REQUESTS);
      expect(statuses.size, summary).toBe(1);
      expect(after.emulatorMb, summary).toBeDefined();
      expect(after.emulatorMb!, summary).toBeLessThan(EMULATOR_RSS_BOUND_MB);
      // Still answering after the load.
      const last = await fetch(`${stack.url}/devices`);
      await last.arrayBuffer();
      expect(last.status).toBe(200);
    },
    DRIVE_LIMIT_MS + REQUEST_TIMEOUT_MS + SETTLE_MS + 10_000,
  );
});
