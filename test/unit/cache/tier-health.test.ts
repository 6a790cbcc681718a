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

  it('names the cause once more when a degradation first logged as only slow shows why, and never again', () => {
    class SlowError extends Error {}
    const logger = recordingLogger();
    const health = makeTierHealth('cluster', logger, { unexplained: (error) => error instanceof SlowError });
    health.failed('unavailable', new SlowError('connecting took longer than 500 ms'));
    health.failed('unavailable', new SlowError('not connected (connecting)'));
    health.failed('unavailable', new Error('WRONGPASS invalid username-password pair'));
    health.failed('unavailable', new Error('WRONGPASS invalid username-password pair'));
    health.failed('unavailable', new SlowError('connecting took longer than 500 ms'));
    expect(logger.lines.map((line) => [line.level, line.fields.error])).toEqual([
      ['warn', 'Error: connecting took longer than 500 ms'],
      ['warn', 'Error: WRONGPASS invalid username-password pair'],
    ]);
    // After a recovery, a new degradation starts the same way.
    health.succeeded();
    health.failed('unavailable', new Error('connect ECONNREFUSED'));
    health.failed('unavailable', new Error('WRONGPASS invalid username-password pair'));
    expect(logger.lines.map((line) => line.message)).toEqual([
      'cache tier degraded',
      'cache tier degraded',
      'cache tier recovered',
      'cache tier degraded',
    ]);
  });
});
