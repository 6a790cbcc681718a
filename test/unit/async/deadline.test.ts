import { describe, expect, it } from 'vitest';
import { deadlineIn, remainingTimeOf } from '../../../lib/async/deadline.ts';

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
