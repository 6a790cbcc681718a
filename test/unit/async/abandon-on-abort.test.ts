import { describe, expect, it } from 'vitest';
import { abandonOnAbort, withinMs } from '../../../lib/async/abandon-on-abort.ts';
import { failureOf } from '../../support/failure-of.ts';

describe('abandonOnAbort', () => {
  it('settles as the work does while the signal has not aborted, or without a signal', async () => {
    expect(await abandonOnAbort(Promise.resolve('done'), new AbortController().signal)).toBe('done');
    const failed = new Error('work failed');
    expect(await failureOf(abandonOnAbort(Promise.reject(failed), new AbortController().signal))).toBe(failed);
    expect(await abandonOnAbort(Promise.resolve('done'), undefined)).toBe('done');
  });

  it("stops waiting with the signal's reason when it aborts first, leaving the work to finish", async () => {
    const controller = new AbortController();
    let finish: (value: string) => void = () => undefined;
    const work = new Promise<string>((resolve) => (finish = resolve));
    const waited = abandonOnAbort(work, controller.signal);
    const reason = new Error('deadline');
    controller.abort(reason);
    expect(await failureOf(waited)).toBe(reason);
    finish('late');
    expect(await work).toBe('late');
  });

  it('rejects at once for a signal that already aborted, and a later failure of the work goes unreported', async () => {
    const reason = new Error('already over');
    let fail: (error: Error) => void = () => undefined;
    const work = new Promise<string>((_resolve, reject) => (fail = reject));
    const waited = abandonOnAbort(work, AbortSignal.abort(reason));
    expect(await failureOf(waited)).toBe(reason);
    // Unhandled, this rejection would fail the run (vitest reports unhandled rejections as errors).
    fail(new Error('late failure'));
    await new Promise((resolve) => setImmediate(resolve));
  });
});

describe('withinMs', () => {
  it('settles as the work does within its time, and stops waiting with the given error past it', async () => {
    expect(await withinMs(Promise.resolve('fast'), 1_000, () => new Error('slow'))).toBe('fast');
    const failed = new Error('failed');
    await expect(withinMs(Promise.reject(failed), 1_000, () => new Error('slow'))).rejects.toBe(failed);
    const timedOut = new Error('took too long');
    await expect(withinMs(new Promise<never>(() => undefined), 5, () => timedOut)).rejects.toBe(timedOut);
  });
});
