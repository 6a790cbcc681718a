/**
 * Runs `tasks` with at most `limit` in flight and returns their results in task order. The first
 * failure aborts `abort` (so in-flight siblings stop early), no further task starts, and that first
 * failure is what rejects, once every started task has settled.
 */
export const runBounded = async <T>(tasks: readonly (() => Promise<T>)[], limit: number, abort: AbortController): Promise<T[]> => {
  const results: T[] = new Array<T>(tasks.length);
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (failure === undefined && next < tasks.length) {
      const index = next;
      next += 1;
      try {
        results[index] = await tasks[index]!();
      } catch (error) {
        if (failure === undefined) {
          failure = { error };
          abort.abort(error);
        }
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, tasks.length)) }, worker));
  if (failure !== undefined) throw failure.error;
  return results;
};
