import { describeError } from '../errors.ts';
import { makeStateLog, type HealthLogger } from '../runtime/logger.ts';

/**
 * Tracks whether the cluster tier is answering and writes one log line per change of state
 * (healthy ↔ degraded), never one per lookup: a Redis outage must not double the log volume.
 */
export type TierState = 'healthy' | 'degraded';

export interface TierHealth {
  state: () => TierState;
  succeeded: () => void;
  failed: (reason: string, error?: unknown) => void;
}

export interface TierHealthOptions {
  /**
   * Errors that say only that the tier was too slow (a connection still being made when its budget ran
   * out), not why. A degradation first logged with one is logged once more when the cause itself shows
   * (a refused password, a certificate), so the log names it.
   */
  unexplained?: (error: unknown) => boolean;
}

const describe = (error: unknown): string | undefined => (error === undefined ? undefined : describeError(error));

export const makeTierHealth = (tier: string, logger: HealthLogger, options: TierHealthOptions = {}): TierHealth => {
  const unexplained = (error: unknown) => error !== undefined && (options.unexplained?.(error) ?? false);
  let explained = true;
  const warn = (reason: string, error: unknown) => {
    const detail = describe(error);
    logger.warn('cache tier degraded', {
      cache_tier_name: tier,
      cache_tier_state: 'degraded',
      reason,
      ...(detail === undefined ? {} : { error: detail }),
    });
  };
  const log = makeStateLog<TierState>('healthy', (state, _previous, cause) => {
    if (state === 'healthy') {
      logger.info('cache tier recovered', { cache_tier_name: tier, cache_tier_state: state });
      return;
    }
    const { reason, error } = cause as { reason: string; error: unknown };
    explained = !unexplained(error);
    warn(reason, error);
  });
  return {
    state: log.state,
    succeeded: () => log.set('healthy'),
    failed: (reason, error) => {
      if (log.state() === 'degraded' && !explained && !unexplained(error)) {
        explained = true;
        warn(reason, error);
        return;
      }
      log.set('degraded', { reason, error });
    },
  };
};
