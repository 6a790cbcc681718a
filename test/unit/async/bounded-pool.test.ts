import { describe, expect, it } from 'vitest';
import { runBounded } from '../../../lib/async/bounded-pool.ts';

/** Lets every promise callback already queued run (no timer, no real time). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('bounded pool (runBounded)', () => {
  it('returns results in task order and never runs more than the limit at once', async () => {
    let active = 0;
    let peak = 0;
    const started: number[] = [];
    // Each task runs until the test lets it finish.
    const finish = Array.from({ length: 12 }, () => Promise.withResolvers<void>());
    const tasks = finish.map((gate, index) => async () => {
      active += 1;
      peak = Math.max(peak, active);
      started.push(index);
      await gate.promise;
      active -= 1;
      return index * 10;
    });
    const running = runBounded(tasks, 4, new AbortController());
    await settle();
    expect(started).toEqual([0, 1, 2, 3]);
    // Finish them out of order (the latest started first), so results arrive out of task order.
    const finished = new Set<number>();
    while (finished.size < tasks.length) {
      const next = started.filter((index) => !finished.has(index)).at(-1)!;
      finished.add(next);
      finish[next]!.resolve();
      await settle();
      expect(active).toBeLessThanOrEqual(4);
    }
    expect(await running).toEqual(Array.from({ length: 12 }, (_, index) => index * 10));
    expect(peak).toBe(4);
    expect(started).toHaveLength(12);
  });

  it('rejects with the first failure, aborts the siblings and starts nothing more', async () => {
    const abort = new AbortController();
    const started: number[] = [];
    const first = new Error('page 1 failed');
    const tasks = Array.from({ length: 10 }, (_, index) => async () => {
      started.push(index);
      if (index === 1) throw first;
      // A sibling ends only when aborted.
      await new Promise((_resolve, reject) => {
        abort.signal.addEventListener('abort', () => reject(new Error(`sibling ${index} aborted`)));
      });
      return index;
    });
    const outcome = runBounded(tasks, 3, abort).then(
      () => 'resolved',
      (error: unknown) => error,
    );
    await settle();
    expect(abort.signal.aborted).toBe(true);
    expect(await outcome).toBe(first);
    expect(started).toEqual([0, 1, 2]);
  });

  it('resolves an empty task list to an empty result list', async () => {
    expect(await runBounded([], 4, new AbortController())).toEqual([]);
  });
});
