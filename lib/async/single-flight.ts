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
