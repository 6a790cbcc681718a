import { ConfigError, describeError } from '../errors.ts';

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
