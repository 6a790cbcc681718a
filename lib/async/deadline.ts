/**
 * When a piece of work must be over: the instant (ms on `Date.now`'s clock), so a retry can tell
 * whether a wait and one more attempt still fit, and the signal that fires then, so everything in
 * flight stops. Made once per read from the Lambda's remaining time and passed down as it is.
 */
export interface Deadline {
  readonly at: number;
  readonly signal: AbortSignal;
}

/** A deadline `ms` from now. */
export const deadlineIn = (ms: number, now: () => number = Date.now): Deadline => ({
  at: now() + Math.max(0, ms),
  signal: AbortSignal.timeout(Math.max(0, ms)),
});
