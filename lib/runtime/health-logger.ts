/**
 * Where a dependency's changes of health are written: one warning when it stops serving, one line
 * when it serves again, never one per request (the cluster tier, the latest-OS feed). The function's
 * Powertools logger fits.
 */
export interface HealthLogger {
  warn: (message: string, fields: Record<string, unknown>) => void;
  info: (message: string, fields: Record<string, unknown>) => void;
}

/**
 * A dependency's state, with `write` called once per change (never per call): what every health
 * line above is written through. `detail` is the change's cause, passed on as given.
 */
export const makeStateLog = <State>(initial: State, write: (next: State, previous: State, detail: unknown) => void) => {
  let state = initial;
  return {
    state: (): State => state,
    set: (next: State, detail?: unknown): void => {
      if (next === state) return;
      const previous = state;
      state = next;
      write(next, previous, detail);
    },
  };
};
