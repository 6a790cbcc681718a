/**
 * Settles as `promise` does, unless `signal` aborts first (or already has): then rejects with the
 * signal's reason. For work that takes no signal of its own (an ioredis command, Powertools' SSM
 * read, a dynamic import): the work is not cancelled, only no longer waited for. Without a signal,
 * `promise` itself.
 */
export const abandonOnAbort = <T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> => {
  if (signal === undefined) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    // Handled even once abandoned: a late rejection of the work is not an unhandled one.
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
};

/**
 * The one timer-bounded wait: settles as `promise` does within `ms`, else rejects with `timedOut()`
 * (the work goes on, unwaited for). The timer never keeps a process alive on its own.
 */
export const withinMs = async <T>(promise: Promise<T>, ms: number, timedOut: () => Error): Promise<T> => {
  const bound = new AbortController();
  const timer = setTimeout(() => bound.abort(timedOut()), ms);
  timer.unref();
  try {
    return await abandonOnAbort(promise, bound.signal);
  } finally {
    clearTimeout(timer);
  }
};
