import { describeError } from '../errors.ts';
import { makeStateLog, type HealthLogger } from '../runtime/health-logger.ts';

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

const describe = (error: unknown): string | undefined => (error === undefined ? undefined : describeError(error));

export const makeTierHealth = (tier: string, logger: HealthLogger): TierHealth => {
  const log = makeStateLog<TierState>('healthy', (state, _previous, cause) => {
    if (state === 'healthy') {
      logger.info('cache tier recovered', { cache_tier_name: tier, cache_tier_state: state });
      return;
    }
    const { reason, error } = cause as { reason: string; error: unknown };
    const detail = describe(error);
    logger.warn('cache tier degraded', {
      cache_tier_name: tier,
      cache_tier_state: state,
      reason,
      ...(detail === undefined ? {} : { error: detail }),
    });
  });
  return {
    state: log.state,
    succeeded: () => log.set('healthy'),
    failed: (reason, error) => log.set('degraded', { reason, error }),
  };
};
