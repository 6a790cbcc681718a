import { describe, expect, it } from 'vitest';
import {
  feedReference as referenceOf,
  fixedReference,
  type DeviceFacts,
  type LatestReference,
} from '../../../lib/latest-os/latest-reference.ts';
import { sofaReleases, type SofaReleases } from '../../../lib/latest-os/sofa-feed.ts';
import { isLatest } from '../../support/latest-decision.ts';
import feedV1 from '../../../demo/sofa/macos-data-feed-v1.json' with { type: 'json' };
import feedV2 from '../../../demo/sofa/macos-data-feed-v2.json' with { type: 'json' };
import iosFeedV2 from '../../../demo/sofa/ios-data-feed-v2.json' with { type: 'json' };

type Release = { ProductVersion: string; ReleaseType?: string; ReleaseDate: string };
type OsEntry = { OSVersion: string; Latest: Release; SecurityReleases: Release[] };

const feedReference = (feed: unknown, fallback?: string): LatestReference => referenceOf(sofaReleases(feed) as SofaReleases, fallback);
const entriesOf = (feed: unknown): OsEntry[] => (feed as { OSVersions: OsEntry[] }).OSVersions;

/** Ventura as it stood on 12 July 2023, when the RSR 13.4.1 (c) was its newest release. */
const venturaOnRsrDay = (): unknown => {
  const feed = structuredClone(feedV1) as { OSVersions: OsEntry[] };
  const ventura = feed.OSVersions.find((entry) => entry.OSVersion === 'Ventura 13')!;
  ventura.SecurityReleases = ventura.SecurityReleases.filter((release) => release.ReleaseDate <= '2023-07-12T00:00:00Z');
  ventura.Latest = { ...ventura.Latest, ProductVersion: '13.4.1' };
  return feed;
};

describe('feedReference on the real feed, for Macs no device-specific release names', () => {
  it.each([
    ['v1', feedV1],
    ['v2', feedV2],
  ])("makes a Mac on each major's Latest latest, and one on any older release of it not (%s)", (_label, feed) => {
    const reference = feedReference(feed);
    for (const entry of entriesOf(feed)) {
      expect(isLatest(reference, entry.Latest.ProductVersion, undefined), entry.Latest.ProductVersion).toBe(true);
      for (const release of entry.SecurityReleases) {
        if (release.ProductVersion === entry.Latest.ProductVersion) continue;
        expect(isLatest(reference, release.ProductVersion, undefined), release.ProductVersion).toBe(false);
      }
    }
  });

  it('makes a fully patched Mac on an older major latest while a newer major is out', () => {
    const reference = feedReference(feedV2, '26.6.2');
    expect(isLatest(reference, '15.7.9', undefined)).toBe(true);
    expect(isLatest(reference, '14.8.9', undefined)).toBe(true);
    expect(isLatest(reference, '15.7.8', undefined)).toBe(false);
    expect(isLatest(reference, '26.6.1', undefined)).toBe(false);
  });

  it('reads the forms Jamf sends: a trailing .0, a build after the version', () => {
    const reference = feedReference(feedV1);
    expect(isLatest(reference, '15.7.0', undefined)).toBe(true);
    expect(isLatest(reference, '26.0.0', undefined)).toBe(true);
    expect(isLatest(reference, '26.0 (25A354)', undefined)).toBe(true);
    expect(isLatest(reference, '14.7.8', undefined)).toBe(false);
  });

  it('decides a major the feed does not list against LATEST_OS_VERSION when that is set', () => {
    const reference = feedReference(feedV2, '13.7.8');
    expect(isLatest(reference, '13.7.8', undefined)).toBe(true);
    expect(isLatest(reference, '12.7.6', undefined)).toBe(false);
    expect(isLatest(reference, '27.0', undefined)).toBe(true);
    // Listed majors still follow the feed, not the fallback.
    expect(isLatest(reference, '15.7.8', undefined)).toBe(false);
    expect(isLatest(reference, '26.6.1', undefined)).toBe(false);
  });

  it('makes no Mac on a major the feed does not list latest without LATEST_OS_VERSION', () => {
    const reference = feedReference(feedV2);
    for (const version of ['13.7.8', '12.7.6', '10.9.5', '27.0']) expect(isLatest(reference, version, undefined), version).toBe(false);
  });

  it('is never latest without a version, or with one that does not parse', () => {
    const reference = feedReference(feedV2, '26.6.2');
    expect(isLatest(reference, undefined, '(a)')).toBe(false);
    expect(isLatest(reference, 'Tahoe', undefined)).toBe(false);
  });
});

describe('the response level in the decision', () => {
  it('needs the newest response applied when a response is the latest (Ventura, 12 July 2023)', () => {
    const reference = feedReference(venturaOnRsrDay());
    expect(isLatest(reference, '13.4.1', undefined)).toBe(false);
    expect(isLatest(reference, '13.4.1', '(a)')).toBe(false);
    expect(isLatest(reference, '13.4.1', '(c)')).toBe(true);
    expect(isLatest(reference, '13.4.1 (c)', undefined)).toBe(true);
    expect(isLatest(reference, '13.5', undefined)).toBe(true);
  });

  it('counts a response on a Mac above the bare release it applies to', () => {
    const reference = fixedReference('26.3.1');
    expect(isLatest(reference, '26.3.1', undefined)).toBe(true);
    expect(isLatest(reference, '26.3.1', '(a)')).toBe(true);
    expect(isLatest(reference, '26.3', '(a)')).toBe(false);
  });

  it('does not count a Mac without the response as latest against 26.3.1 (a)', () => {
    const reference = fixedReference('26.3.1 (a)');
    expect(isLatest(reference, '26.3.1', undefined)).toBe(false);
    expect(isLatest(reference, '26.3.1', '(a)')).toBe(true);
    expect(isLatest(reference, '26.3.1 (a)', undefined)).toBe(true);
    expect(isLatest(reference, '26.3.2', undefined)).toBe(true);
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

describe('feedReference per device, on the real v2 feed (docs/api.md#os_is_latest)', () => {
  type Improvement = { Version: string; VersionExtra: string; SupportedDevices: string[] | null; DeviceScope: string };
  type V2 = {
    OSVersions: (OsEntry & { Latest: Release & { SupportedDevices?: string[] } })[];
    BackgroundSecurityImprovements: Record<string, Improvement[]>;
  };

  /** Tahoe as it stood on 17 March 2026: 26.3.2 the newest release, 26.3.2 (a) a BSI for board J700AP alone. */
  const tahoeOnBsiDay = (): V2 => {
    const feed = structuredClone(feedV2) as unknown as V2;
    const tahoe = feed.OSVersions.find((entry) => entry.OSVersion === 'Tahoe 26')!;
    tahoe.SecurityReleases = tahoe.SecurityReleases.filter((release) => release.ReleaseDate <= '2026-03-17T00:00:00Z');
    tahoe.Latest = { ...tahoe.Latest, ProductVersion: '26.3.2' };
    return feed;
  };
  const decide = (reference: LatestReference, device: Partial<DeviceFacts>) =>
    reference.decide({ osVersion: undefined, response: undefined, boardId: undefined, modelIdentifier: undefined, ...device });

  it('decides a Mac against a device-specific release only when the release names its board: the others stay latest', () => {
    const reference = feedReference(tahoeOnBsiDay(), '26.6.2');
    expect(decide(reference, { osVersion: '26.3.2', boardId: 'J413AP' })).toEqual({ latest: true, reference: '26.3.2' });
    expect(decide(reference, { osVersion: '26.3.2', boardId: 'J700AP' })).toEqual({ latest: false, reference: '26.3.2 (a)' });
    expect(decide(reference, { osVersion: '26.3.2', response: '(a)', boardId: 'J700AP' })).toEqual({
      latest: true,
      reference: '26.3.2 (a)',
    });
  });

  it('matches a Mac without a board id by every board id the Devices table gives its model identifier, in any case', () => {
    const reference = feedReference(tahoeOnBsiDay());
    // Devices: J700AP → Mac17,5.
    expect(decide(reference, { osVersion: '26.3.2', modelIdentifier: 'Mac17,5' })).toEqual({ latest: false, reference: '26.3.2 (a)' });
    expect(decide(reference, { osVersion: '26.3.2', modelIdentifier: 'mac17,5' })).toEqual({ latest: false, reference: '26.3.2 (a)' });
    // The board id wins over the model: the Mac's own board is not J700AP.
    expect(decide(reference, { osVersion: '26.3.2', boardId: 'J413AP', modelIdentifier: 'Mac17,5' })).toEqual({
      latest: true,
      reference: '26.3.2',
    });
    // An empty board id is none; a model the table does not hold, and no model, get the releases for every device.
    expect(decide(reference, { osVersion: '26.3.2', boardId: '', modelIdentifier: 'Mac17,5' }).reference).toBe('26.3.2 (a)');
    expect(decide(reference, { osVersion: '26.3.2', modelIdentifier: 'Mac14,2' })).toEqual({ latest: true, reference: '26.3.2' });
    expect(decide(reference, { osVersion: '26.3.2' })).toEqual({ latest: true, reference: '26.3.2' });
  });

  it('ranks BSI levels as response levels: 26.3.1 (a), for every device, above 26.3.1 and below 26.3.2', () => {
    const feed = tahoeOnBsiDay();
    const tahoe = feed.OSVersions.find((entry) => entry.OSVersion === 'Tahoe 26')!;
    // Tahoe on the day before 26.3.2: 26.3.1 (a) the newest for every Mac.
    tahoe.SecurityReleases = tahoe.SecurityReleases.filter((release) => release.ProductVersion !== '26.3.2');
    tahoe.Latest = { ...tahoe.Latest, ProductVersion: '26.3.1' };
    feed.BackgroundSecurityImprovements['26'] = feed.BackgroundSecurityImprovements['26']!.filter((bsi) => bsi.Version === '26.3.1');
    const reference = feedReference(feed);
    expect(decide(reference, { osVersion: '26.3.1', boardId: 'J413AP' })).toEqual({ latest: false, reference: '26.3.1 (a)' });
    expect(decide(reference, { osVersion: '26.3.1', response: '(a)', boardId: 'J413AP' })).toEqual({
      latest: true,
      reference: '26.3.1 (a)',
    });
    expect(decide(reference, { osVersion: '26.3.1 (c)' }).latest).toBe(true);
  });

  it("reads a device-specific release without SupportedDevices as its major's Latest devices, and an empty list as none", () => {
    const feed = tahoeOnBsiDay();
    const tahoe = feed.OSVersions.find((entry) => entry.OSVersion === 'Tahoe 26')!;
    const bsi = feed.BackgroundSecurityImprovements['26']!.find((entry) => entry.Version === '26.3.2')!;
    bsi.SupportedDevices = null;
    tahoe.Latest.SupportedDevices = ['J999AP'];
    expect(decide(feedReference(feed), { osVersion: '26.3.2', boardId: 'J999AP' }).reference).toBe('26.3.2 (a)');
    expect(decide(feedReference(feed), { osVersion: '26.3.2', boardId: 'J413AP' }).reference).toBe('26.3.2');
    bsi.SupportedDevices = [];
    expect(decide(feedReference(feed), { osVersion: '26.3.2', boardId: 'J999AP' }).reference).toBe('26.3.2');
  });

  it("says what each device was decided against: the feed's version as written, LATEST_OS_VERSION as written, or nothing", () => {
    const feed = feedReference(feedV2, '27.0 ');
    expect(decide(feed, { osVersion: '15.7.8' })).toEqual({ latest: false, reference: '15.7.9' });
    expect(decide(feed, { osVersion: '27.1' })).toEqual({ latest: true, reference: '27.0' });
    expect(decide(feedReference(feedV2), { osVersion: '13.7.8' })).toEqual({ latest: false, reference: undefined });
    expect(decide(feed, { osVersion: 'Tahoe' })).toEqual({ latest: false, reference: undefined });
    expect(decide(fixedReference('26.1'), { osVersion: '26.0.1' })).toEqual({ latest: false, reference: '26.1' });
    expect(decide(fixedReference(undefined), { osVersion: '26.0.1' })).toEqual({ latest: false, reference: undefined });
  });

  it("keeps the per-major rule on a v1 feed, whatever the Mac's board: Ventura on its RSR day", () => {
    const reference = feedReference(venturaOnRsrDay());
    expect(decide(reference, { osVersion: '13.4.1', boardId: 'J413AP' })).toEqual({ latest: false, reference: '13.4.1 (c)' });
    expect(decide(reference, { osVersion: '13.4.1', response: '(c)', modelIdentifier: 'Mac14,2' })).toEqual({
      latest: true,
      reference: '13.4.1 (c)',
    });
  });
});

describe('feedReference with product-type matching, on the demo iOS feed', () => {
  const reference = referenceOf(sofaReleases(iosFeedV2) as SofaReleases, '26.6.1', 'product-type');
  const decide = (osVersion: string, modelIdentifier: string | undefined, response?: string) =>
    reference.decide({ osVersion, response, boardId: undefined, modelIdentifier });

  it('applies a device-specific release to the product types it lists only, whatever their case', () => {
    expect(decide('18.7.10', 'iPhone11,2')).toEqual({ latest: true, reference: '18.7.10' });
    expect(decide('18.7.8', 'iphone11,2')).toEqual({ latest: false, reference: '18.7.10' });
    expect(decide('18.7.8', 'iPhone12,1')).toEqual({ latest: true, reference: '18.7.8' });
    // A device-specific release below its major's universal Latest decides nothing.
    expect(decide('26.5.1', 'iPhone18,1')).toEqual({ latest: false, reference: '26.6.1' });
  });

  it('gives a device without a model identifier the releases for every device, and ranks the BSI as a response level', () => {
    expect(decide('18.7.8', undefined)).toEqual({ latest: true, reference: '18.7.8' });
    expect(decide('26.3.1', 'iPad15,7', '(a)')).toEqual({ latest: false, reference: '26.6.1' });
    expect(decide('16.7.12', 'iPhone10,1')).toEqual({ latest: false, reference: '26.6.1' });
  });

  it('keys apart from the board-matched reference of the same feed', () => {
    expect(reference.key).not.toBe(referenceOf(sofaReleases(iosFeedV2) as SofaReleases, '26.6.1').key);
  });
});
