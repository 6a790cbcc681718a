import { describe, expect, it } from 'vitest';
import { runBounded } from '../../../lib/upstream/bounded-pool.ts';

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('bounded pool (runBounded)', () => {
  it('returns results in task order and never runs more than the limit at once', async () => {
    let active = 0;
    let peak = 0;
    const tasks = Array.from({ length: 12 }, (_, index) => async () => {
      active += 1;
      peak = Math.max(peak, active);
      await tick(5 + ((index * 7) % 11));
      active -= 1;
      return index * 10;
    });
    const results = await runBounded(tasks, 4, new AbortController());
    expect(results).toEqual(Array.from({ length: 12 }, (_, index) => index * 10));
    expect(peak).toBe(4);
  });

  it('rejects with the first failure, aborts the siblings and starts nothing more', async () => {
    const abort = new AbortController();
    const started: number[] = [];
    const first = new Error('page 1 failed');
    const tasks = Array.from({ length: 10 }, (_, index) => async () => {
      started.push(index);
      if (index === 1) throw first;
      await new Promise((resolve, reject) => {
        const timer = setTimeout(resolve, 1000);
        abort.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(new Error(`sibling ${index} aborted`));
        });
      });
      return index;
    });
    await expect(runBounded(tasks, 3, abort)).rejects.toBe(first);
    expect(abort.signal.aborted).toBe(true);
    expect(started).toEqual([0, 1, 2]);
  });

  it('handles an empty task list', async () => {
    expect(await runBounded([], 4, new AbortController())).toEqual([]);
  });
});
