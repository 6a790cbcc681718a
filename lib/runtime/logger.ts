import { Logger } from '@aws-lambda-powertools/logger';
import { ConfigError, describeError } from '../errors.ts';

/**
 * A function's logger, and the lines it writes outside a request's access line: a dependency's
 * changes of health and the configuration check at init.
 */

/**
 * One Powertools logger per Lambda. Level and sampling come from the usual POWERTOOLS_* variables,
 * which Powertools reads itself.
 */
export const makeLogger = (serviceName: string): Logger => new Logger({ serviceName });

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

interface ErrorLogger {
  error: (message: string, fields: Record<string, unknown>) => void;
}

/**
 * Tries a function's (memoized) configuration once at init, so a missing or invalid variable is
 * reported by name when the container starts, not only on the first request's access line. It never
 * throws: the request path meets the same memoized error and answers a generic 500.
 */
export const checkConfigAtStartup = (logger: ErrorLogger, load: () => unknown): void => {
  try {
    load();
  } catch (error) {
    if (error instanceof ConfigError) {
      logger.error('configuration error at startup', { variable: error.variable, error: error.message });
    } else {
      logger.error('startup check failed', { error: describeError(error) });
    }
  }
};
