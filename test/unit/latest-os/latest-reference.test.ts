import { describe, expect, it } from 'vitest';
import { fixedReference, perMajorReference, type LatestReference } from '../../../lib/latest-os/latest-reference.ts';
import { latestByMajor, type LatestByMajor } from '../../../lib/latest-os/sofa-feed.ts';
import feedV1 from '../../../demo/sofa/macos-data-feed-v1.json' with { type: 'json' };
import feedV2 from '../../../demo/sofa/macos-data-feed-v2.json' with { type: 'json' };

type Release = { ProductVersion: string; ReleaseType?: string; ReleaseDate: string };
type OsEntry = { OSVersion: string; Latest: Release; SecurityReleases: Release[] };

const feedReference = (feed: unknown, fallback?: string): LatestReference => perMajorReference(latestByMajor(feed) as LatestByMajor, fallback);
const entriesOf = (feed: unknown): OsEntry[] => (feed as { OSVersions: OsEntry[] }).OSVersions;

/** Ventura as it stood on 12 July 2023, when the RSR 13.4.1 (c) was its newest release. */
const venturaOnRsrDay = (): unknown => {
  const feed = structuredClone(feedV1) as { OSVersions: OsEntry[] };
  const ventura = feed.OSVersions.find((entry) => entry.OSVersion === 'Ventura 13')!;
  ventura.SecurityReleases = ventura.SecurityReleases.filter((release) => release.ReleaseDate <= '2023-07-12T00:00:00Z');
  ventura.Latest = { ...ventura.Latest, ProductVersion: '13.4.1' };
  return feed;
};

describe('perMajorReference on the real feed', () => {
  it.each([
    ['v1', feedV1],
    ['v2', feedV2],
  ])("makes a Mac on each major's Latest latest, and one on any older release of it not (%s)", (_label, feed) => {
    const reference = feedReference(feed);
    for (const entry of entriesOf(feed)) {
      expect(reference.isLatest(entry.Latest.ProductVersion, undefined), entry.Latest.ProductVersion).toBe(true);
      for (const release of entry.SecurityReleases) {
        if (release.ProductVersion === entry.Latest.ProductVersion) continue;
        expect(reference.isLatest(release.ProductVersion, undefined), release.ProductVersion).toBe(false);
      }
    }
  });

  it('makes a fully patched Mac on an older major latest while a newer major is out', () => {
    const reference = feedReference(feedV2, '26.6.2');
    expect(reference.isLatest('15.7.9', undefined)).toBe(true);
    expect(reference.isLatest('14.8.9', undefined)).toBe(true);
    expect(reference.isLatest('15.7.8', undefined)).toBe(false);
    expect(reference.isLatest('26.6.1', undefined)).toBe(false);
  });

  it('reads the forms Jamf sends: a trailing .0, a build after the version', () => {
    const reference = feedReference(feedV1);
    expect(reference.isLatest('15.7.0', undefined)).toBe(true);
    expect(reference.isLatest('26.0.0', undefined)).toBe(true);
    expect(reference.isLatest('26.0 (25A354)', undefined)).toBe(true);
    expect(reference.isLatest('14.7.8', undefined)).toBe(false);
  });

  it('decides a major the feed does not list against LATEST_OS_VERSION when that is set', () => {
    const reference = feedReference(feedV2, '13.7.8');
    expect(reference.isLatest('13.7.8', undefined)).toBe(true);
    expect(reference.isLatest('12.7.6', undefined)).toBe(false);
    expect(reference.isLatest('27.0', undefined)).toBe(true);
    // Listed majors still follow the feed, not the fallback.
    expect(reference.isLatest('15.7.8', undefined)).toBe(false);
    expect(reference.isLatest('26.6.1', undefined)).toBe(false);
  });

  it('makes no Mac on a major the feed does not list latest without LATEST_OS_VERSION', () => {
    const reference = feedReference(feedV2);
    for (const version of ['13.7.8', '12.7.6', '10.9.5', '27.0']) expect(reference.isLatest(version, undefined), version).toBe(false);
  });

  it('is never latest without a version, or with one that does not parse', () => {
    const reference = feedReference(feedV2, '26.6.2');
    expect(reference.isLatest(undefined, '(a)')).toBe(false);
    expect(reference.isLatest('Tahoe', undefined)).toBe(false);
  });
});

describe('the response level in the decision', () => {
  it('needs the newest response applied when a response is the latest (Ventura, 12 July 2023)', () => {
    const reference = feedReference(venturaOnRsrDay());
    expect(reference.isLatest('13.4.1', undefined)).toBe(false);
    expect(reference.isLatest('13.4.1', '(a)')).toBe(false);
    expect(reference.isLatest('13.4.1', '(c)')).toBe(true);
    expect(reference.isLatest('13.4.1 (c)', undefined)).toBe(true);
    expect(reference.isLatest('13.5', undefined)).toBe(true);
  });

  it('counts a response on a Mac above the bare release it applies to', () => {
    const reference = fixedReference('26.3.1');
    expect(reference.isLatest('26.3.1', undefined)).toBe(true);
    expect(reference.isLatest('26.3.1', '(a)')).toBe(true);
    expect(reference.isLatest('26.3', '(a)')).toBe(false);
  });

  it('does not count a Mac without the response as latest against 26.3.1 (a)', () => {
    const reference = fixedReference('26.3.1 (a)');
    expect(reference.isLatest('26.3.1', undefined)).toBe(false);
    expect(reference.isLatest('26.3.1', '(a)')).toBe(true);
    expect(reference.isLatest('26.3.1 (a)', undefined)).toBe(true);
    expect(reference.isLatest('26.3.2', undefined)).toBe(true);
  });
});

describe('the reference key', () => {
  it('names equal references alike, and any change of the feed or the fallback apart', () => {
    expect(feedReference(feedV2, '26.6.2').key).toBe(feedReference(structuredClone(feedV2), '26.6.2').key);
    const keys = new Set([
      feedReference(feedV2, '26.6.2').key,
      feedReference(feedV2).key,
      feedReference(feedV2, '26.6').key,
      feedReference(feedV1, '26.6.2').key,
      feedReference(venturaOnRsrDay(), '26.6.2').key,
      fixedReference('26.6.2').key,
      fixedReference(undefined).key,
    ]);
    expect(keys.size).toBe(7);
  });

  it('names a fixed version by its value, however it is written', () => {
    expect(fixedReference('26.6.2').key).toBe(fixedReference('26.6.2 ').key);
    expect(fixedReference('26.3.1 (a)').key).not.toBe(fixedReference('26.3.1').key);
  });
});
