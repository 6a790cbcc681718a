import { describe, expect, it } from 'vitest';
import { latestRelease, sofaReleases } from '../../../lib/latest-os/sofa-feed.ts';
import { compareVersions, formatVersion, parseVersion, type Version } from '../../../lib/latest-os/os-version.ts';
import feedV1 from '../../../demo/sofa/macos-data-feed-v1.json' with { type: 'json' };
import feedV2 from '../../../demo/sofa/macos-data-feed-v2.json' with { type: 'json' };

type Release = Record<string, unknown> & { ProductVersion: string; ReleaseDate: string };
type OsEntry = { OSVersion: string; Latest: Release; SecurityReleases: Release[] };
type Feed = Record<string, unknown> & { OSVersions: OsEntry[] };

type LatestByMajor = ReadonlyMap<string, Version>;

/** The latest of each major the feed lists for a Mac with `boards` (none: one that no device-specific release names). */
const latestByMajor = (feed: unknown, boards: readonly string[] = []): LatestByMajor | string => {
  const releases = sofaReleases(feed);
  if (typeof releases === 'string') return releases;
  return new Map([...releases.byMajor].map(([major, list]) => [major, latestRelease(list, boards)!.version]));
};

const copy = (feed: unknown): Feed => structuredClone(feed) as Feed;
const readable = (latest: LatestByMajor | string): Record<string, string> => {
  if (typeof latest === 'string') throw new Error(`not a feed: ${latest}`);
  return Object.fromEntries([...latest].map(([major, version]) => [major, formatVersion(version)]));
};
const entryOf = (feed: Feed, major: string): OsEntry => feed.OSVersions.find((entry) => entry.OSVersion.endsWith(` ${major}`))!;

/**
 * The feed as it stood on `date` for one major: its releases up to that day, the newest of them as
 * its Latest. The real feed's history, cut from the copy, for the days a response was the newest.
 */
const asOf = (feed: Feed, major: string, date: string): Feed => {
  const cut = copy(feed);
  const entry = entryOf(cut, major);
  entry.SecurityReleases = entry.SecurityReleases.filter((release) => release.ReleaseDate <= date);
  entry.Latest = { ...entry.Latest, ...entry.SecurityReleases.find((release) => release.ReleaseType === 'OS') };
  return cut;
};

describe('the releases of the real SOFA feed, per major', () => {
  it("reads the v1 feed (September 2025): one latest per major, the RSR entries below Ventura's latest", () => {
    expect(readable(latestByMajor(feedV1))).toEqual({ '26': '26.0', '15': '15.7', '14': '14.8', '13': '13.7.8' });
  });

  it("reads the v2 feed (August 2026), its Background Security Improvements below Tahoe's latest", () => {
    expect(readable(latestByMajor(feedV2))).toEqual({ '26': '26.6.2', '15': '15.7.9', '14': '14.8.9' });
  });

  it.each([
    ['v1', feedV1],
    ['v2', feedV2],
  ])("agrees with every major's own Latest.ProductVersion in the %s feed", (_label, feed) => {
    const latest = latestByMajor(feed) as LatestByMajor;
    for (const entry of copy(feed).OSVersions) {
      const major = entry.OSVersion.split(' ').at(-1)!;
      expect(compareVersions(latest.get(major), parseVersion(entry.Latest.ProductVersion)), entry.OSVersion).toBe(0);
    }
  });

  it('takes an RSR as the latest when it was the newest release: Ventura on 12 and 10 July 2023 (ReleaseType RSR_c, RSR_a)', () => {
    expect(readable(latestByMajor(asOf(copy(feedV1), '13', '2023-07-12T00:00:00Z')))['13']).toBe('13.4.1 (c)');
    expect(readable(latestByMajor(asOf(copy(feedV1), '13', '2023-07-10T00:00:00Z')))['13']).toBe('13.4.1 (a)');
    expect(readable(latestByMajor(asOf(copy(feedV1), '13', '2023-07-09T00:00:00Z')))['13']).toBe('13.4.1');
  });

  it('reads the response level from UpdateName when ReleaseType does not carry it', () => {
    const feed = asOf(copy(feedV1), '13', '2023-07-12T00:00:00Z');
    for (const release of entryOf(feed, '13').SecurityReleases) release.ReleaseType = 'OS';
    expect(readable(latestByMajor(feed))['13']).toBe('13.4.1 (c)');
  });

  it('reads a response level written after the version, as Apple writes it', () => {
    const feed = asOf(copy(feedV1), '13', '2023-07-12T00:00:00Z');
    for (const release of entryOf(feed, '13').SecurityReleases) {
      if (release.ReleaseType === 'RSR_c')
        Object.assign(release, { ProductVersion: '13.4.1 (c)', ReleaseType: 'OS', UpdateName: 'Rapid Security Response' });
    }
    expect(readable(latestByMajor(feed))['13']).toBe('13.4.1 (c)');
  });

  it('takes a Background Security Improvement as the latest of the Macs it names when it was the newest: Tahoe on 17 March 2026', () => {
    const feed = asOf(copy(feedV2), '26', '2026-03-17T00:00:00Z');
    expect(entryOf(feed, '26').Latest.ProductVersion).toBe('26.3.2');
    // 26.3.2 (a) is device-specific, for the one board id J700AP: every other Mac's latest stays 26.3.2.
    expect(readable(latestByMajor(feed, ['J700AP']))['26']).toBe('26.3.2 (a)');
    expect(readable(latestByMajor(feed, ['J413AP']))['26']).toBe('26.3.2');
    expect(readable(latestByMajor(feed))['26']).toBe('26.3.2');
    // Without the device-specific 26.3.2 (a), the universal 26.3.1 (a) stays below 26.3.2 for every Mac.
    (feed.BackgroundSecurityImprovements as Record<string, unknown[]>)['26']!.splice(0, 1);
    expect(readable(latestByMajor(feed, ['J700AP']))['26']).toBe('26.3.2');
  });

  it("compares the installer's version and build, written as one string, equal to the release", () => {
    const apps = feedV2.InstallationApps as { AllPreviousUMA: { Version: string; Build: string }[] };
    const installer = apps.AllPreviousUMA.find((app) => app.Build === '25G72')!;
    const text = `${installer.Version} (${installer.Build})`;
    expect(text).toBe('26.6 (25G72)');
    const release = entryOf(copy(feedV2), '26').SecurityReleases.find((entry) => entry.Build === '25G72')!;
    expect(compareVersions(parseVersion(text), parseVersion(release.ProductVersion))).toBe(0);
  });

  it('counts a Background Security Improvement only for a major the feed lists', () => {
    const feed = copy(feedV2);
    feed.BackgroundSecurityImprovements = {
      '27': [{ Version: '27.0', VersionExtra: '(a)' }],
      '15': [{ Version: '15.7.9', VersionExtra: '(b)' }],
    };
    expect(readable(latestByMajor(feed))).toEqual({ '26': '26.6.2', '15': '15.7.9 (b)', '14': '14.8.9' });
  });

  it('skips malformed Background Security Improvements and keeps the rest of the feed', () => {
    const feed = copy(feedV2);
    feed.BackgroundSecurityImprovements = { '26': [null, { Version: 27 }, { Version: 'soon' }, 'x'], '15': 'not a list' };
    expect(readable(latestByMajor(feed))).toEqual({ '26': '26.6.2', '15': '15.7.9', '14': '14.8.9' });
  });

  it('skips a release whose ProductVersion is not a version, keeping its major', () => {
    const feed = copy(feedV2);
    entryOf(feed, '15').SecurityReleases[0]!.ProductVersion = 'Sequoia';
    expect(readable(latestByMajor(feed))['15']).toBe('15.7.9');
  });
});

describe('sofaReleases on documents that are not the feed', () => {
  const withEntry = (change: (entry: Record<string, unknown>) => void): Feed => {
    const feed = copy(feedV2);
    change(feed.OSVersions[1] as unknown as Record<string, unknown>);
    return feed;
  };

  it.each([
    ['null', null, 'it has no OSVersions list'],
    ['an array', [feedV2], 'it has no OSVersions list'],
    ['an object without OSVersions', { UpdateHash: 'x' }, 'it has no OSVersions list'],
    ['OSVersions that is not a list', { OSVersions: 'Tahoe 26' }, 'it has no OSVersions list'],
    ['an empty OSVersions', { OSVersions: [] }, 'it has no OSVersions list'],
    [
      'an entry that is not an object',
      { ...copy(feedV2), OSVersions: [copy(feedV2).OSVersions[0], 'Sequoia 15'] },
      'OSVersions[1] has no Latest and SecurityReleases',
    ],
    ['an entry without Latest', withEntry((entry) => delete entry.Latest), 'OSVersions[1] has no Latest and SecurityReleases'],
    [
      'SecurityReleases that is not a list',
      withEntry((entry) => (entry.SecurityReleases = {})),
      'OSVersions[1] has no Latest and SecurityReleases',
    ],
    [
      'a Latest without ProductVersion',
      withEntry((entry) => delete (entry.Latest as Partial<Release>).ProductVersion),
      'OSVersions[1].Latest has no ProductVersion that is a version',
    ],
    [
      'a Latest whose ProductVersion is not a version',
      withEntry((entry) => ((entry.Latest as Release).ProductVersion = 'latest')),
      'OSVersions[1].Latest has no ProductVersion that is a version',
    ],
    [
      'a release without ProductVersion',
      withEntry((entry) => delete (entry.SecurityReleases as Partial<Release>[])[2]!.ProductVersion),
      'OSVersions[1].SecurityReleases holds an entry without a ProductVersion',
    ],
    [
      'a release that is not an object',
      withEntry((entry) => (entry.SecurityReleases as unknown[]).push('15.8')),
      'OSVersions[1].SecurityReleases holds an entry without a ProductVersion',
    ],
  ])('says why %s is not a SOFA feed', (_label, document, reason) => {
    expect(latestByMajor(document)).toBe(reason);
  });
});
