import { afterEach, describe, expect, it, vi } from 'vitest';
import { deadlineIn, deadlineWith, remainingTimeOf } from '../../../lib/async/deadline.ts';

describe('remainingTimeOf', () => {
  it("reads the Lambda context's remaining time at each call", () => {
    let remaining = 5_000;
    const context = { getRemainingTimeInMillis: () => remaining };
    const remainingTime = remainingTimeOf(context, 60_000);
    expect(remainingTime()).toBe(5_000);
    remaining = 1_200;
    expect(remainingTime()).toBe(1_200);
  });

  it('counts the fallback budget down from when it was made without a context, never below 0', () => {
    let now = 1_000;
    const remainingTime = remainingTimeOf(undefined, 30_000, () => now);
    expect(remainingTime()).toBe(30_000);
    now += 12_500;
    expect(remainingTime()).toBe(17_500);
    now += 60_000;
    expect(remainingTime()).toBe(0);
    expect(remainingTimeOf({}, 10, () => now)()).toBe(10);
  });
});

describe('deadlineIn', () => {
  it('sets the instant `ms` from now, and none in the past', () => {
    expect(deadlineIn(2_000, () => 50).at).toBe(2_050);
    expect(deadlineIn(-5, () => 50).at).toBe(50);
  });
});

describe('deadlineWith', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("fires its signal at the instant with the caller's reason, not a TimeoutError", () => {
    vi.useFakeTimers();
    const reason = new Error('stopped before the Lambda timeout');
    const deadline = deadlineWith(
      1_000,
      () => reason,
      () => 50,
    );
    expect(deadline.at).toBe(1_050);
    vi.advanceTimersByTime(999);
    expect(deadline.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(deadline.signal.aborted).toBe(true);
    expect(deadline.signal.reason).toBe(reason);
  });

  it('never fires once cleared, and fires at once when no time is left', () => {
    vi.useFakeTimers();
    const cleared = deadlineWith(1_000, () => new Error('late'));
    cleared.clear();
    vi.advanceTimersByTime(5_000);
    expect(cleared.signal.aborted).toBe(false);
    const spent = deadlineWith(
      -20,
      () => new Error('spent'),
      () => 50,
    );
    expect(spent.at).toBe(50);
    vi.advanceTimersByTime(0);
    expect(spent.signal.aborted).toBe(true);
  });
});
