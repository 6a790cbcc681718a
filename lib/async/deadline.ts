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

/**
 * A deadline `ms` from now whose signal fires with the caller's own `reason` (what a run that stops
 * there reports) rather than a TimeoutError; `clear` stops its timer when the work ended first.
 */
export const deadlineWith = (ms: number, reason: () => unknown, now: () => number = Date.now): Deadline & { clear: () => void } => {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(reason()), Math.max(0, ms));
  return { at: now() + Math.max(0, ms), signal: controller.signal, clear: () => clearTimeout(timer) };
};

/** The longest a Lambda invocation ever runs (15 minutes): the budget of a direct call without a context. */
export const LAMBDA_MAX_MS = 15 * 60 * 1000;

/** The one part of a Lambda context a deadline needs. */
export interface RemainingTimeSource {
  getRemainingTimeInMillis?: () => number;
}

/**
 * The invocation's remaining time, the one way every handler reads it: from the Lambda context, or,
 * without one (a direct call, a test), `fallbackMs` counted from now.
 */
export const remainingTimeOf = (
  context: RemainingTimeSource | undefined,
  fallbackMs: number,
  now: () => number = Date.now,
): (() => number) => {
  const fromContext = context?.getRemainingTimeInMillis?.bind(context);
  if (fromContext !== undefined) return fromContext;
  const end = now() + fallbackMs;
  return () => Math.max(0, end - now());
};
