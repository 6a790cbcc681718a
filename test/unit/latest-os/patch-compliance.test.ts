import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  feedReference,
  fixedReference,
  type DeviceFacts,
  type FeedMatch,
  type LatestReference,
} from '../../../lib/latest-os/latest-reference.ts';
import { sofaReleases, type SofaReleases } from '../../../lib/latest-os/sofa-feed.ts';
import { DEFAULT_SERVICE_LEVELS, osFieldsOf, type ServiceLevels } from '../../../lib/latest-os/patch-compliance.ts';
import macosV1 from '../../../demo/sofa/macos-data-feed-v1.json' with { type: 'json' };
import macosV2 from '../../../demo/sofa/macos-data-feed-v2.json' with { type: 'json' };
import iosV1 from '../../../demo/sofa/ios-data-feed-v1.json' with { type: 'json' };
import iosV2 from '../../../demo/sofa/ios-data-feed-v2.json' with { type: 'json' };
import tvosV1 from '../../../demo/sofa/tvos-data-feed-v1.json' with { type: 'json' };
import tvosV2 from '../../../demo/sofa/tvos-data-feed-v2.json' with { type: 'json' };

type Release = Record<string, unknown> & { ProductVersion: string; ReleaseDate: string };
type Feed = { OSVersions: { OSVersion: string; Latest: Release; SecurityReleases: Release[] }[] } & Record<string, unknown>;

/** A device's `os_*` fields against `reference` at `now` (ms), as a list renders them. */
const deviceOsFields = (reference: LatestReference, device: DeviceFacts, now: number) => osFieldsOf(reference.assess(device), now);
const releasesOf = (feed: unknown): SofaReleases => sofaReleases(feed) as SofaReleases;
const copy = (feed: unknown): Feed => structuredClone(feed) as Feed;
const entryOf = (feed: Feed, major: string) => feed.OSVersions.find((entry) => entry.OSVersion.split(' ').at(-1) === major)!;

/** The fields of one device against `feed` at `now`. */
const fieldsOf = (
  feed: unknown,
  match: FeedMatch,
  device: Partial<DeviceFacts>,
  now = '2026-08-22T12:00:00Z',
  levels: ServiceLevels = DEFAULT_SERVICE_LEVELS,
) =>
  deviceOsFields(
    feedReference(releasesOf(feed), undefined, match, levels),
    { osVersion: undefined, response: undefined, boardId: undefined, modelIdentifier: undefined, ...device },
    Date.parse(now),
  );

/** A major's releases up to `date`, the OS release `latest` its Latest: the feed as it stood that day. */
const asOf = (feed: unknown, major: string, date: string, latest: string): Feed => {
  const cut = copy(feed);
  const entry = entryOf(cut, major);
  entry.SecurityReleases = entry.SecurityReleases.filter((release) => release.ReleaseDate <= date);
  entry.Latest = { ...entry.SecurityReleases.find((release) => release.ProductVersion === latest && release.ReleaseType === 'OS')! };
  return cut;
};

const LATEST = { os_missing_releases: 0, os_unpatched_cves: 0, os_overdue: false };

describe('patch compliance on the real macOS feeds (hand-worked)', () => {
  it('counts a Tahoe Mac on 26.6 (v2): two releases missing, one with an exploited CVE that sets the due date', () => {
    // Above 26.6 for board J413AP (every Tahoe release is universal; the BSIs are 26.3.x, below):
    //   26.6.2 (Latest and SecurityReleases[0]: one version) 2026-08-17, 28 CVEs (empty details), none exploited → +21 d = 2026-09-07
    //   26.6.1 2026-08-06, CVE-2026-65400 ({"ActivelyExploited": true}, and in ActivelyExploitedCVEs) → +14 d = 2026-08-20
    // missing 2; CVEs 28 + 1 = 29 (no id in both); due the earlier: 2026-08-20.
    expect(fieldsOf(macosV2, 'board', { osVersion: '26.6', boardId: 'J413AP' })).toEqual({
      os_is_latest: false,
      os_latest_version: '26.6.2',
      os_missing_releases: 2,
      os_unpatched_cves: 29,
      os_exploited_cves: ['CVE-2026-65400'],
      os_update_due_at: '2026-08-20T00:00:00.000Z',
      os_overdue: true,
    });
    // 26.6.1: only 26.6.2 above (28 CVEs, none exploited): 2026-08-17 + 21 d.
    expect(fieldsOf(macosV2, 'board', { osVersion: '26.6.1', boardId: 'J413AP' })).toEqual({
      os_is_latest: false,
      os_latest_version: '26.6.2',
      os_missing_releases: 1,
      os_unpatched_cves: 28,
      os_update_due_at: '2026-09-07T00:00:00.000Z',
      os_overdue: false,
    });
    expect(fieldsOf(macosV2, 'board', { osVersion: '26.6.2', boardId: 'J413AP' })).toEqual({
      os_is_latest: true,
      os_latest_version: '26.6.2',
      ...LATEST,
    });
  });

  it('counts Background Security Improvements with the device-scope rule: Tahoe on 17 March 2026 (v2)', () => {
    // Releases to 2026-03-17: 26.3.2 (03-10, no CVE), 26.3.1 (03-04, no CVE), 26.3 (02-11); BSIs posted
    // 2026-03-17, CVEs ["CVE-2026-20643"] (a list, not exploited): 26.3.2 (a) for J700AP only, 26.3.1 (a) universal.
    const feed = asOf(macosV2, '26', '2026-03-17T00:00:00Z', '26.3.2');
    const onDay = (device: Partial<DeviceFacts>) => fieldsOf(feed, 'board', device, '2026-03-18T00:00:00Z');
    // J700AP on 26.3.2: 26.3.2 (a) alone above → 1 missing, 1 CVE, security level: 03-17 + 21 d = 04-07.
    expect(onDay({ osVersion: '26.3.2', boardId: 'J700AP' })).toEqual({
      os_is_latest: false,
      os_latest_version: '26.3.2 (a)',
      os_missing_releases: 1,
      os_unpatched_cves: 1,
      os_update_due_at: '2026-04-07T00:00:00.000Z',
      os_overdue: false,
    });
    // Any other Mac on 26.3.2: the device-specific BSI is not its release, so it is latest.
    expect(onDay({ osVersion: '26.3.2', boardId: 'J413AP' })).toEqual({ os_is_latest: true, os_latest_version: '26.3.2', ...LATEST });
    // J413AP on 26.3: 26.3.1 (no CVE: 03-04 + 28 d = 04-01), 26.3.1 (a) (04-07), 26.3.2 (03-10 + 28 d = 04-07):
    // 3 missing, 1 CVE, due 04-01.
    expect(onDay({ osVersion: '26.3', boardId: 'J413AP' })).toEqual({
      os_is_latest: false,
      os_latest_version: '26.3.2',
      os_missing_releases: 3,
      os_unpatched_cves: 1,
      os_update_due_at: '2026-04-01T00:00:00.000Z',
      os_overdue: false,
    });
  });

  it('reads v1 exploited marks (true) and RSR levels: Ventura on 13.7.7, and on 12 July 2023', () => {
    // 13.7.8 (Latest and SecurityReleases[0]) 2025-08-20, CVEs {"CVE-2025-43300": true} → +14 d = 2025-09-03.
    expect(fieldsOf(macosV1, 'board', { osVersion: '13.7.7' }, '2025-09-02T23:59:59Z')).toEqual({
      os_is_latest: false,
      os_latest_version: '13.7.8',
      os_missing_releases: 1,
      os_unpatched_cves: 1,
      os_exploited_cves: ['CVE-2025-43300'],
      os_update_due_at: '2025-09-03T00:00:00.000Z',
      os_overdue: false,
    });
    // On 12 July 2023, a Mac on bare 13.4.1 lacks the RSRs 13.4.1 (a) (07-10) and (c) (07-12), both fixing
    // the exploited CVE-2023-37450: 2 versions, 1 CVE, due 07-10 + 14 d = 07-24.
    const ventura = asOf(macosV1, '13', '2023-07-12T00:00:00Z', '13.4.1');
    expect(fieldsOf(ventura, 'board', { osVersion: '13.4.1' }, '2023-07-12T00:00:00Z')).toEqual({
      os_is_latest: false,
      os_latest_version: '13.4.1 (c)',
      os_missing_releases: 2,
      os_unpatched_cves: 1,
      os_exploited_cves: ['CVE-2023-37450'],
      os_update_due_at: '2023-07-24T00:00:00.000Z',
      os_overdue: false,
    });
    expect(fieldsOf(ventura, 'board', { osVersion: '13.4.1', response: '(c)' }, '2023-07-12T00:00:00Z')).toMatchObject(LATEST);
  });
});

describe('patch compliance on the real iOS feeds (hand-worked)', () => {
  it('applies device-specific releases to their product types only (v2)', () => {
    // iPhone11,2 on 18.7.9: 18.7.10 (device-specific, lists iPhone11,2) 2026-08-17, 122 CVEs → +21 d = 09-07.
    expect(fieldsOf(iosV2, 'product-type', { osVersion: '18.7.9', modelIdentifier: 'iPhone11,2' })).toEqual({
      os_is_latest: false,
      os_latest_version: '18.7.10',
      os_missing_releases: 1,
      os_unpatched_cves: 122,
      os_update_due_at: '2026-09-07T00:00:00.000Z',
      os_overdue: false,
    });
    // iPhone12,1 on 18.7.6: 18.7.7 (listed twice, one version; 26 CVEs) 03-24 + 21 d = 04-14, 18.7.8 (1 CVE)
    // 04-22 + 21 d = 05-13; 18.7.9 and 18.7.10 are not its own. 2 missing, 26 + 1 = 27 CVEs, due 04-14.
    expect(fieldsOf(iosV2, 'product-type', { osVersion: '18.7.6', modelIdentifier: 'iPhone12,1' })).toEqual({
      os_is_latest: false,
      os_latest_version: '18.7.8',
      os_missing_releases: 2,
      os_unpatched_cves: 27,
      os_update_due_at: '2026-04-14T00:00:00.000Z',
      os_overdue: true,
    });
  });

  it('counts the BSI 26.3.1 (a), which has no CVEs and no scope, by its PostingDate (v2)', () => {
    // iPad15,7 on 26.3.1: 26.3.1 (a) (posted 03-17, no CVE: +28 d = 04-14), 26.4 (44 CVEs, 03-24 + 21 d = 04-14),
    // 26.4.1 (0), 26.4.2 (1), 26.5 (61), 26.5.2 (38), 26.6 (86), 26.6.1 (29); 26.5.1 is for iPhone18,x only.
    // 8 missing; 44 + 1 + 61 + 38 + 86 + 29 = 259 CVEs, no id repeated; due 04-14.
    const expected = {
      os_is_latest: false,
      os_latest_version: '26.6.1',
      os_missing_releases: 8,
      os_unpatched_cves: 259,
      os_update_due_at: '2026-04-14T00:00:00.000Z',
      os_overdue: true,
    };
    expect(fieldsOf(iosV2, 'product-type', { osVersion: '26.3.1', modelIdentifier: 'iPad15,7' })).toEqual(expected);
    // With the BSI applied, 7 versions remain; the due date (26.4's) stays.
    expect(fieldsOf(iosV2, 'product-type', { osVersion: '26.3.1', response: '(a)', modelIdentifier: 'iPad15,7' })).toEqual({
      ...expected,
      os_missing_releases: 7,
    });
  });

  it('keeps the per-major rule on v1, its releases out of order: 18.7.10 listed after 18.7.2', () => {
    // 18: 18.7.9 (47 CVEs, 05-11 + 21 d = 06-01) and 18.7.10 (122 CVEs, 08-17) above 18.7.8: 2 missing, 169 CVEs.
    expect(fieldsOf(iosV1, 'product-type', { osVersion: '18.7.8', modelIdentifier: 'iPhone12,1' })).toEqual({
      os_is_latest: false,
      os_latest_version: '18.7.10',
      os_missing_releases: 2,
      os_unpatched_cves: 169,
      os_update_due_at: '2026-06-01T00:00:00.000Z',
      os_overdue: true,
    });
    // 17: 17.7.10 (CVE-2025-43300: true, 2025-08-20 + 14 d = 09-03) and 17.7.11 (1 CVE, 2026-05-11) above 17.7.9.
    expect(fieldsOf(iosV1, 'product-type', { osVersion: '17.7.9' }, '2025-09-03T00:00:00Z')).toEqual({
      os_is_latest: false,
      os_latest_version: '17.7.11',
      os_missing_releases: 2,
      os_unpatched_cves: 2,
      os_exploited_cves: ['CVE-2025-43300'],
      os_update_due_at: '2025-09-03T00:00:00.000Z',
      os_overdue: true,
    });
  });
});

describe('patch compliance on the real tvOS feeds (hand-worked)', () => {
  it('reads release dates without a time, and exploited CVEs from ActivelyExploitedCVEs alone (v2)', () => {
    // AppleTV14,1 on 26.4: 26.5 ("2026-05-11", 46 CVEs → 06-01) and 26.6 ("2026-07-27", 100 CVEs → 08-17).
    expect(fieldsOf(tvosV2, 'product-type', { osVersion: '26.4', modelIdentifier: 'AppleTV14,1' })).toEqual({
      os_is_latest: false,
      os_latest_version: '26.6',
      os_missing_releases: 2,
      os_unpatched_cves: 146,
      os_update_due_at: '2026-06-01T00:00:00.000Z',
      os_overdue: true,
    });
    // On 18.4: 18.4.1 (CVE-2025-31200/31201, in ActivelyExploitedCVEs, details without the mark; 2025-04-16 + 14 d
    // = 04-30), 18.5 (27 CVEs), 18.6 (26 CVEs, CVE-2025-31277 and CVE-2025-6558 exploited). 3 missing, 55 CVEs.
    expect(fieldsOf(tvosV2, 'product-type', { osVersion: '18.4', modelIdentifier: 'AppleTV11,1' }, '2025-04-29T00:00:00Z')).toEqual({
      os_is_latest: false,
      os_latest_version: '18.6',
      os_missing_releases: 3,
      os_unpatched_cves: 55,
      os_exploited_cves: ['CVE-2025-31200', 'CVE-2025-31201', 'CVE-2025-31277', 'CVE-2025-6558'],
      os_update_due_at: '2025-04-30T00:00:00.000Z',
      os_overdue: false,
    });
    expect(fieldsOf(tvosV2, 'product-type', { osVersion: '26.6', modelIdentifier: 'AppleTV14,1' })).toEqual({
      os_is_latest: true,
      os_latest_version: '26.6',
      ...LATEST,
    });
  });

  it('counts the v1 feed of September 2025 alike', () => {
    // On 18.4.1: 18.5 (25 CVEs, 2025-05-12 + 21 d = 06-02) and 18.6 (24 CVEs, CVE-2025-6558: true; 07-29 + 14 d = 08-12).
    expect(fieldsOf(tvosV1, 'product-type', { osVersion: '18.4.1', modelIdentifier: 'AppleTV14,1' }, '2025-06-02T00:00:00Z')).toEqual({
      os_is_latest: false,
      os_latest_version: '18.6',
      os_missing_releases: 2,
      os_unpatched_cves: 49,
      os_exploited_cves: ['CVE-2025-6558'],
      os_update_due_at: '2025-06-02T00:00:00.000Z',
      os_overdue: true,
    });
  });
});

describe('when the compliance fields are absent', () => {
  it('has none for a major the feed does not list, a version that does not parse, or no feed', () => {
    expect(fieldsOf(tvosV2, 'product-type', { osVersion: '17.6.1' })).toEqual({ os_is_latest: false });
    expect(fieldsOf(macosV2, 'board', { osVersion: 'Tahoe' })).toEqual({ os_is_latest: false });
    expect(fieldsOf(macosV2, 'board', {})).toEqual({ os_is_latest: false });
    const device = { osVersion: '26.6', response: undefined, boardId: undefined, modelIdentifier: undefined };
    expect(deviceOsFields(fixedReference('26.6.2'), device, 0)).toEqual({ os_is_latest: false, os_latest_version: '26.6.2' });
    // A major the feed does not list, decided against LATEST_OS_VERSION: no compliance either.
    expect(deviceOsFields(feedReference(releasesOf(macosV2), '13.7.8'), { ...device, osVersion: '13.7.8' }, 0)).toEqual({
      os_is_latest: true,
      os_latest_version: '13.7.8',
    });
  });

  it('leaves a release without a readable date out of the due date, and omits the date when none is left', () => {
    const feed = copy(macosV2);
    const tahoe = entryOf(feed, '26');
    // 26.6.1 undated: only 26.6.2 (2026-08-17 + 21 d) dates a Mac on 26.6.
    for (const release of tahoe.SecurityReleases) if (release.ProductVersion === '26.6.1') release.ReleaseDate = '6 August 2026';
    expect(fieldsOf(feed, 'board', { osVersion: '26.6' })).toMatchObject({
      os_missing_releases: 2,
      os_update_due_at: '2026-09-07T00:00:00.000Z',
    });
    for (const release of [tahoe.Latest, ...tahoe.SecurityReleases])
      if (release.ProductVersion === '26.6.2') delete (release as Partial<Release>).ReleaseDate;
    const fields = fieldsOf(feed, 'board', { osVersion: '26.6' });
    expect(fields).toEqual({
      os_is_latest: false,
      os_latest_version: '26.6.2',
      os_missing_releases: 2,
      os_unpatched_cves: 29,
      os_exploited_cves: ['CVE-2026-65400'],
      os_overdue: false,
    });
  });

  it('takes the service levels as given, and counts a time of day on its UTC date', () => {
    const levels = { exploitedDays: 0, securityDays: 1, otherDays: 2 };
    // 26.6.1 exploited, 2026-08-06 + 0 d.
    expect(fieldsOf(macosV2, 'board', { osVersion: '26.6' }, '2026-08-06T00:00:00Z', levels).os_update_due_at).toBe(
      '2026-08-06T00:00:00.000Z',
    );
    const feed = copy(macosV2);
    for (const release of entryOf(feed, '26').SecurityReleases)
      if (release.ProductVersion === '26.6.1') release.ReleaseDate = '2026-08-05T22:30:00-04:00';
    expect(fieldsOf(feed, 'board', { osVersion: '26.6' }).os_update_due_at).toBe('2026-08-20T00:00:00.000Z');
  });
});

describe('patch compliance properties', () => {
  type Sample = { feed: unknown; match: FeedMatch; major: string; models: (string | undefined)[] };
  const SAMPLES: Sample[] = [
    { feed: macosV1, match: 'board', major: '13', models: [undefined] },
    { feed: macosV2, match: 'board', major: '26', models: ['J700AP', 'J413AP', undefined] },
    { feed: iosV1, match: 'product-type', major: '18', models: ['iPhone11,2', undefined] },
    { feed: iosV2, match: 'product-type', major: '18', models: ['iPhone11,2', 'iPhone12,1', undefined] },
    { feed: iosV2, match: 'product-type', major: '26', models: ['iPhone18,1', 'iPad15,7'] },
    { feed: tvosV1, match: 'product-type', major: '17', models: ['AppleTV6,2'] },
    { feed: tvosV2, match: 'product-type', major: '26', models: ['AppleTV14,1'] },
  ];
  const version = (major: string) =>
    fc
      .tuple(fc.nat({ max: 9 }), fc.nat({ max: 12 }), fc.option(fc.constantFrom('a', 'b', 'c'), { nil: undefined }))
      .map(([minor, patch, level]) => `${major}.${minor}.${patch}${level === undefined ? '' : ` (${level})`}`);
  const device = fc.constantFrom(...SAMPLES).chain((sample) =>
    fc.record({
      sample: fc.constant(sample),
      osVersion: version(sample.major),
      model: fc.constantFrom(...sample.models),
    }),
  );
  const factsOf = (sample: Sample, osVersion: string, model: string | undefined): DeviceFacts =>
    sample.match === 'board'
      ? { osVersion, response: undefined, boardId: model, modelIdentifier: undefined }
      : { osVersion, response: undefined, boardId: undefined, modelIdentifier: model };

  it('has os_missing_releases 0 exactly when os_is_latest, for every device the feed decides', () => {
    fc.assert(
      fc.property(device, ({ sample, osVersion, model }) => {
        const fields = deviceOsFields(
          feedReference(releasesOf(sample.feed), undefined, sample.match),
          factsOf(sample, osVersion, model),
          0,
        );
        expect(fields.os_missing_releases).toBeDefined();
        expect(fields.os_missing_releases === 0).toBe(fields.os_is_latest);
        if (fields.os_is_latest) expect(fields).toEqual({ os_is_latest: true, os_latest_version: fields.os_latest_version, ...LATEST });
      }),
      { numRuns: 300 },
    );
  });

  it('counts alike whatever the order of the releases and of the improvements', () => {
    fc.assert(
      fc.property(device, fc.integer(), ({ sample, osVersion, model }, seed) => {
        const shuffled = copy(sample.feed);
        let state = seed;
        const shuffle = <T>(list: T[]): T[] => {
          for (let index = list.length - 1; index > 0; index -= 1) {
            state = (state * 1103515245 + 12345) & 0x7fffffff;
            const other = state % (index + 1);
            [list[index], list[other]] = [list[other]!, list[index]!];
          }
          return list;
        };
        for (const entry of shuffled.OSVersions) shuffle(entry.SecurityReleases);
        for (const list of Object.values((shuffled.BackgroundSecurityImprovements ?? {}) as Record<string, unknown[]>)) shuffle(list);
        const facts = factsOf(sample, osVersion, model);
        const at = Date.parse('2026-01-01T00:00:00Z');
        expect(deviceOsFields(feedReference(releasesOf(shuffled), undefined, sample.match), facts, at)).toEqual(
          deviceOsFields(feedReference(releasesOf(sample.feed), undefined, sample.match), facts, at),
        );
      }),
      { numRuns: 200 },
    );
  });

  it('turns os_overdue true exactly at os_update_due_at', () => {
    fc.assert(
      fc.property(device, fc.integer({ min: -3 * 86_400_000, max: 3 * 86_400_000 }), ({ sample, osVersion, model }, offset) => {
        const reference = feedReference(releasesOf(sample.feed), undefined, sample.match);
        const facts = factsOf(sample, osVersion, model);
        const due = deviceOsFields(reference, facts, 0).os_update_due_at;
        fc.pre(due !== undefined);
        const dueAt = Date.parse(due!);
        expect(deviceOsFields(reference, facts, dueAt - 1).os_overdue).toBe(false);
        expect(deviceOsFields(reference, facts, dueAt).os_overdue).toBe(true);
        expect(deviceOsFields(reference, facts, dueAt + offset).os_overdue).toBe(offset >= 0);
      }),
      { numRuns: 200 },
    );
  });
});
