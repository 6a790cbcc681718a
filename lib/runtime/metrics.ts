import type { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { once } from '../async/once.ts';

/**
 * CloudWatch metrics in the log (Powertools Metrics, embedded metric format), with Powertools loaded
 * the first time something is counted: most GET /devices requests count nothing, and a cold start
 * should not pay for a module it may never use (docs/architecture.md#cold-start).
 */
export type MetricUnitName = 'Count' | 'Seconds';

export interface LazyMetrics {
  /** Keeps a value for the next `publish()`. */
  add: (name: string, unit: MetricUnitName, value: number) => void;
  /** Writes what was added as one metrics line; writes nothing (and loads nothing) when nothing was. */
  publish: () => Promise<void>;
}

/** The namespace of every metric of the service (serverless.yml sets the same for Powertools). */
const NAMESPACE = 'device-users-import';

export const makeLazyMetrics = (serviceName: string): LazyMetrics => {
  const pending: { name: string; unit: MetricUnitName; value: number }[] = [];
  const loaded = once((): Promise<{ metrics: Metrics; units: typeof MetricUnit }> =>
    import('@aws-lambda-powertools/metrics').then((powertools) => ({
      // Explicit so an unset POWERTOOLS_METRICS_NAMESPACE (tests, npm start) writes no warning line.
      metrics: new powertools.Metrics({ namespace: NAMESPACE, serviceName }),
      units: powertools.MetricUnit,
    })),
  );
  return {
    add: (name, unit, value) => {
      pending.push({ name, unit, value });
    },
    publish: async () => {
      if (pending.length === 0) return;
      const { metrics, units } = await loaded();
      for (const { name, unit, value } of pending.splice(0)) metrics.addMetric(name, units[unit], value);
      metrics.publishStoredMetrics();
    },
  };
};
