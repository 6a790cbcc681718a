import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isLatest } from '../../support/latest-decision.ts';
import type { HealthLogger } from '../../../lib/runtime/logger.ts';
import { makeLatestOsSource, type LatestOsSourceOptions } from '../../../lib/latest-os/latest-os-feed.ts';
import { readSofaFeed, startFakeSofa, type FakeSofa, type SofaFault } from '../../../demo/fake-sofa.ts';

let sofa: FakeSofa;
let lines: { level: 'warn' | 'info'; message: string; fields: Record<string, unknown> }[];
let clock: number;

const logger: HealthLogger = {
  warn: (message, fields) => lines.push({ level: 'warn', message, fields }),
  info: (message, fields) => lines.push({ level: 'info', message, fields }),
};

beforeEach(async () => {
  sofa = await startFakeSofa();
  lines = [];
  clock = 1_800_000_000_000;
});

afterEach(async () => {
  await sofa.close();
});

const ONE_ATTEMPT = { attempts: 1, backoff: { baseMs: 0, maxMs: 0 } };
const QUICK = { attempts: 4, backoff: { baseMs: 5, maxMs: 40, fullJitter: true } };

const source = (options: Partial<LatestOsSourceOptions> = {}) =>
  makeLatestOsSource({
    feedUrl: sofa.feedUrl('v2'),
    fallbackVersion: '26.6.2',
    system: 'macOS',
    ttlMs: 3_600_000,
    logger,
    timeoutMs: 300,
    retryMs: 60_000,
    // One attempt per fetch: these tests are about what serves; the retries have tests of their own.
    retry: ONE_ATTEMPT,
    now: () => clock,
    ...options,
  });

/** What the reference says of Macs on Sequoia's latest, on Tahoe's previous release, and on Ventura. */
const decisions = async (reference: ReturnType<typeof source>) => {
  const current = await reference();
  return {
    sequoiaLatest: isLatest(current, '15.7.9', undefined),
    tahoePrevious: isLatest(current, '26.6.1', undefined),
    ventura: isLatest(current, '13.7.8', undefined),
  };
};
const FROM_FEED = { sequoiaLatest: true, tahoePrevious: false, ventura: false };
const FROM_FALLBACK = { sequoiaLatest: false, tahoePrevious: false, ventura: false };

const FAULTS: [string, SofaFault][] = [
  ['a timeout', { kind: 'hang' }],
  ['HTTP 500', { kind: 'status', status: 500 }],
  ['a body that is not JSON', { kind: 'garbage' }],
  ['JSON in another shape', { kind: 'wrong-shape' }],
];

describe('the latest-OS feed over HTTP', () => {
  it('decides per major from the feed and keeps it for its TTL: one fetch for many requests', async () => {
    const reference = source();
    expect(await decisions(reference)).toEqual(FROM_FEED);
    clock += 3_599_000;
    await Promise.all(Array.from({ length: 20 }, () => reference()));
    expect(sofa.requests()).toBe(1);
    expect(lines).toEqual([]);
  });

  it('names the service in its User-Agent, as the feed asks of integrations', async () => {
    await source()();
    expect(sofa.lastUserAgent()).toBe('device-users-import-bundle');
  });

  it('follows a redirect to the feed (a mirror or static host moving it)', async () => {
    sofa.redirect('/latest/macos_data_feed.json', 'v2');
    const reference = source({ feedUrl: `${sofa.url}/latest/macos_data_feed.json` });
    expect(await decisions(reference)).toEqual(FROM_FEED);
    expect(sofa.requests()).toBe(2);
    expect(lines).toEqual([]);
  });

  it('shares one fetch among requests that arrive together', async () => {
    const reference = source();
    const references = await Promise.all(Array.from({ length: 10 }, () => reference()));
    expect(new Set(references.map((entry) => entry.key)).size).toBe(1);
    expect(sofa.requests()).toBe(1);
  });

  it('fetches again after the TTL and follows a feed that moved', async () => {
    const reference = source();
    const before = await reference();
    const feed = await readSofaFeed('v2');
    const sequoia = (feed.OSVersions as { Latest: { ProductVersion: string } }[])[1]!;
    sequoia.Latest.ProductVersion = '15.7.10';
    sofa.setFeed('v2', feed);
    clock += 3_600_000;
    const after = await reference();
    expect(after.key).not.toBe(before.key);
    expect(isLatest(after, '15.7.9', undefined)).toBe(false);
    expect(isLatest(after, '15.7.10', undefined)).toBe(true);
    expect(sofa.requests()).toBe(2);
  });

  it.each(FAULTS)('falls back to LATEST_OS_VERSION when the feed fails before any good fetch: %s', async (_label, fault) => {
    sofa.setFault(fault);
    const reference = source();
    expect(await decisions(reference)).toEqual(FROM_FALLBACK);
    expect(isLatest(await reference(), '26.6.2', undefined)).toBe(true);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'warn', message: 'latest OS feed unavailable', fields: { serving: 'LATEST_OS_VERSION' } });
    expect(String(lines[0]!.fields.error)).not.toBe('');
  });

  it.each(FAULTS)('serves the last good copy when the feed fails after a good fetch: %s', async (_label, fault) => {
    const reference = source();
    const good = await reference();
    sofa.setFault(fault);
    clock += 3_600_000;
    const during = await reference();
    expect(during.key).toBe(good.key);
    expect(await decisions(reference)).toEqual(FROM_FEED);
    expect(lines.map((line) => [line.level, line.fields.serving])).toEqual([['warn', 'last good copy']]);
  });

  it('without LATEST_OS_VERSION and without a good copy, makes no Mac latest, and never fails', async () => {
    sofa.setFault({ kind: 'status', status: 503 });
    const reference = source({ fallbackVersion: undefined });
    const current = await reference();
    for (const version of ['26.6.2', '15.7.9', '13.7.8']) expect(isLatest(current, version, undefined)).toBe(false);
  });

  it('waits a retry interval between failed fetches, one warning for the whole outage, one line on recovery', async () => {
    sofa.setFault({ kind: 'status', status: 500 });
    const reference = source();
    for (let request = 0; request < 10; request += 1) {
      await reference();
      clock += 1_000;
    }
    expect(sofa.requests()).toBe(1);
    clock += 60_000;
    await reference();
    expect(sofa.requests()).toBe(2);
    sofa.setFault(undefined);
    clock += 60_000;
    expect(await decisions(reference)).toEqual(FROM_FEED);
    expect(lines.map((line) => [line.level, line.message, line.fields.serving])).toEqual([
      ['warn', 'latest OS feed unavailable', 'LATEST_OS_VERSION'],
      ['info', 'latest OS feed recovered', 'feed'],
    ]);
  });

  it('answers within its timeout while the feed hangs', async () => {
    sofa.setFault({ kind: 'hang' });
    const reference = source({ timeoutMs: 200 });
    const started = performance.now();
    await reference();
    // Bounded by the timeout, not by the server; generous for a loaded machine.
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(String(lines[0]!.fields.error)).toMatch(/timed out after 200 ms/);
  });

  it.each<[string, SofaFault]>([
    ['an HTTP status', { kind: 'status', status: 500 }],
    ['a timeout', { kind: 'hang' }],
  ])("keeps a mirror's token in the feed URL out of its log lines (%s)", async (_label, fault) => {
    sofa.setFault(fault);
    await source({ feedUrl: `${sofa.feedUrl('v2')}?token=feed-token-value` })();
    const logged = JSON.stringify(lines);
    expect(logged).toContain('macos_data_feed.json?token=redacted');
    expect(logged).not.toContain('feed-token-value');
  });

  it('serves LATEST_OS_VERSION alone, fetching nothing, when no feed is configured', async () => {
    const reference = source({ feedUrl: undefined });
    expect(await decisions(reference)).toEqual(FROM_FALLBACK);
    expect(sofa.requests()).toBe(0);
  });

  describe('retries a fetch that fails transiently', () => {
    const retryLines = () => lines.filter((line) => line.message === 'upstream retried');

    it.each<[string, SofaFault, Record<string, number>]>([
      ['two 503s', { kind: 'status', status: 503, times: 2 }, { '503': 2 }],
      ['a 429 with Retry-After', { kind: 'rate-limited', retryAfter: '1', times: 1 }, { '429': 1 }],
      ['a connection dropped mid-answer', { kind: 'drop', times: 1 }, { reset: 1 }],
      ['an attempt that timed out', { kind: 'hang', times: 1 }, { 'timed-out': 1 }],
    ])('serves the feed after %s, with one warning line and no change of state', async (_label, fault, answers) => {
      sofa.setFault(fault);
      let retried = 0;
      const started = Date.now();
      const reference = source({ retry: QUICK, onRetry: () => (retried += 1) });
      expect(await decisions(reference)).toEqual(FROM_FEED);
      if (fault.kind === 'rate-limited') expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
      const count = Object.values(answers).reduce((sum, value) => sum + value, 0);
      expect(sofa.requests()).toBe(count + 1);
      expect(retried).toBe(count);
      expect(lines).toEqual([
        {
          level: 'warn',
          message: 'upstream retried',
          fields: expect.objectContaining({ upstream: 'sofa', retries: count, answers, outcome: 'recovered' }),
        },
      ]);
    });

    it('falls back after 4 attempts at a feed that keeps failing: one retry line, one state line', async () => {
      sofa.setFault({ kind: 'status', status: 502 });
      const reference = source({ retry: QUICK });
      expect(await decisions(reference)).toEqual(FROM_FALLBACK);
      expect(sofa.requests()).toBe(4);
      expect(retryLines()).toHaveLength(1);
      expect(retryLines()[0]!.fields).toMatchObject({ retries: 3, answers: { '502': 4 }, gave_up: 'attempts' });
      expect(lines.filter((line) => line.message === 'latest OS feed unavailable')).toHaveLength(1);
    });

    it("asks once when the request's time holds no wait and another attempt", async () => {
      sofa.setFault({ kind: 'status', status: 503 });
      const reference = source({ retry: QUICK });
      await reference({ remainingTimeMs: () => 1_000 });
      expect(sofa.requests()).toBe(1);
      // Nothing retried, yet the fetch's one line says why it gave up.
      expect(retryLines().map((line) => line.fields)).toEqual([
        expect.objectContaining({ upstream: 'sofa', retries: 0, answers: { '503': 1 }, outcome: 'gave up', gave_up: 'deadline' }),
      ]);
    });

    it('treats a feed over its 32 MiB cap as unavailable, naming the cap, without retrying it', async () => {
      sofa.setFault({ kind: 'oversize', bytes: 33 * 1024 * 1024 });
      const reference = source({ retry: QUICK });
      expect(await decisions(reference)).toEqual(FROM_FALLBACK);
      expect(sofa.requests()).toBe(1);
      expect(String(lines[0]!.fields.error)).toContain('32 MiB cap of a feed');
    });
  });
});
