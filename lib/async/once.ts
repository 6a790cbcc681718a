/**
 * Work run once for every caller that asks: for good (`once`: a function's configuration, a client),
 * or while it runs (`singleFlight`: a read that callers arriving meanwhile share).
 */

/** Runs `load` once and remembers the result (or the error, so every request answers the same). */
export const once = <T>(load: () => T): (() => T) => {
  let outcome: { ok: true; value: T } | { ok: false; error: unknown } | undefined;
  return () => {
    outcome ??= (() => {
      try {
        return { ok: true as const, value: load() };
      } catch (error) {
        return { ok: false as const, error };
      }
    })();
    if (!outcome.ok) throw outcome.error;
    return outcome.value;
  };
};

/**
 * One run of `work` at a time: callers that come while it runs share its promise (the first
 * caller's arguments run it), and a settled run, failed or not, is forgotten, so the next caller
 * starts another.
 */
export const singleFlight = <Args extends unknown[], T>(work: (...args: Args) => Promise<T>) => {
  let flight: Promise<T> | undefined;
  return {
    run: (...args: Args): Promise<T> =>
      (flight ??= work(...args).finally(() => {
        flight = undefined;
      })),
    running: (): boolean => flight !== undefined,
  };
};
