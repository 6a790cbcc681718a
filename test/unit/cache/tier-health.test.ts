import { describe, expect, it } from 'vitest';
import { makeTierHealth } from '../../../lib/cache/tier-health.ts';
import { recordingLogger } from '../../support/recording-logger.ts';

describe('tier health', () => {
  it('writes nothing while the tier keeps succeeding', () => {
    const logger = recordingLogger();
    const health = makeTierHealth('cluster', logger);
    for (let index = 0; index < 5; index += 1) health.succeeded();
    expect(logger.lines).toEqual([]);
    expect(health.state()).toBe('healthy');
  });

  it('writes one warning when the tier degrades, however many lookups fail', () => {
    const logger = recordingLogger();
    const health = makeTierHealth('cluster', logger);
    for (let index = 0; index < 5; index += 1) health.failed('unavailable', new Error('connect ECONNREFUSED'));
    expect(logger.lines).toHaveLength(1);
    expect(logger.lines[0]).toMatchObject({
      level: 'warn',
      fields: { cache_tier_name: 'cluster', cache_tier_state: 'degraded', reason: 'unavailable', error: 'Error: connect ECONNREFUSED' },
    });
  });

  it('writes one line per transition back and forth', () => {
    const logger = recordingLogger();
    const health = makeTierHealth('cluster', logger);
    health.failed('unavailable');
    health.succeeded();
    health.succeeded();
    health.failed('unreadable value');
    expect(logger.lines.map((line) => [line.level, line.fields.cache_tier_state])).toEqual([
      ['warn', 'degraded'],
      ['info', 'healthy'],
      ['warn', 'degraded'],
    ]);
    expect(logger.lines[0]?.fields).not.toHaveProperty('error');
  });
});
