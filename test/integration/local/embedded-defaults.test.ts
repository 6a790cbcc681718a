import { describe, expect, it } from 'vitest';
import { readSofaFeed } from '../../../demo/fake-sofa.ts';
import { DEFAULT_LATEST_OS_VERSION, startEmbeddedDefaults } from '../../../scripts/local/embedded-defaults.ts';

describe('startEmbeddedDefaults with LATEST_OS_FEED_URL=demo', () => {
  it('serves the copy of the SOFA feed on loopback, points the devices at it and says so, then stops it', async () => {
    const defaults = await startEmbeddedDefaults({ LATEST_OS_FEED_URL: 'demo' }, new Set(['inventory']));
    let feedUrl: string | undefined;
    try {
      feedUrl = defaults.env.LATEST_OS_FEED_URL;
      expect(feedUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v2\/macos_data_feed\.json$/);
      expect(defaults.env.LATEST_OS_VERSION).toBe(DEFAULT_LATEST_OS_VERSION);
      const response = await fetch(feedUrl!);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual(await readSofaFeed('v2'));
      expect(defaults.notes.join('\n')).toMatch(/LATEST_OS_FEED_URL +http:\/\/127\.0\.0\.1:\d+\/v2\/macos_data_feed\.json — DEMO DATA/);
    } finally {
      await defaults.stop();
    }
    await expect(fetch(feedUrl!)).rejects.toThrow();
  });

  it('leaves a real feed URL alone', async () => {
    const defaults = await startEmbeddedDefaults({ INVENTORY_URL: 'https://jamf.example.com', LATEST_OS_FEED_URL: 'https://sofa.example.com/feed.json' }, new Set(['inventory']));
    try {
      expect(defaults.env).not.toHaveProperty('LATEST_OS_FEED_URL');
      expect(defaults.notes.join('\n')).not.toContain('LATEST_OS_FEED_URL');
    } finally {
      await defaults.stop();
    }
  });
});
