import { createHash } from 'node:crypto';
import { isPlainObject } from '../values/plain-object.ts';
import { compareVersions, formatVersion, majorOf, parseVersion, responseLevel, type Version } from './os-version.ts';

/**
 * The macOS, iOS and tvOS feeds of SOFA (v1 or v2), one shape: per major release its latest and
 * security releases, each kept with the devices it applies to, the response level wherever the feed
 * writes it (the places: docs/api.md#os_is_latest), and its security content (docs/api.md#patch-compliance).
 */
export interface FeedRelease {
  readonly version: Version;
  /** The version as the feed writes it (`26.6.2`, `26.3.2 (a)`): the device's `os_latest_version`. */
  readonly text: string;
  /** The board ids (macOS) or product types (iOS, tvOS) it applies to; undefined: every device of its major. */
  readonly devices: ReadonlySet<string> | undefined;
  /** The distinct CVE ids it fixes: its `CVEs` keys (a BSI's `CVEs` list) and its `ActivelyExploitedCVEs`. */
  readonly cves: readonly string[];
  /** Those of them it marks actively exploited. */
  readonly exploited: readonly string[];
  /** Its `ReleaseDate` (a BSI's `PostingDate`) as the UTC midnight of its calendar date, in ms; undefined: unreadable. */
  readonly date: number | undefined;
}

/** A CVE's entry in a `CVEs` map marks it exploited as `true` (v1) or `{"ActivelyExploited": true}` (v2). */
const markedExploited = (detail: unknown): boolean => detail === true || (isPlainObject(detail) && detail.ActivelyExploited === true);

const idList = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((id): id is string => typeof id === 'string' && id !== '') : [];

/** What a release (or BSI) fixes, from its `CVEs` (a map, or a BSI's list) and its `ActivelyExploitedCVEs`. */
const securityOf = (release: Record<string, unknown>): { cves: string[]; exploited: string[] } => {
  const listed = idList(release.ActivelyExploitedCVEs);
  const exploited = new Set(listed);
  const cves = new Set(listed);
  if (Array.isArray(release.CVEs)) for (const id of idList(release.CVEs)) cves.add(id);
  else if (isPlainObject(release.CVEs)) {
    for (const [id, detail] of Object.entries(release.CVEs)) {
      if (id === '') continue;
      cves.add(id);
      if (markedExploited(detail)) exploited.add(id);
    }
  }
  return { cves: [...cves].sort(), exploited: [...exploited].sort() };
};

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(Z|[+-]\d{2}:\d{2})?$/;
const DAY_MS = 86_400_000;

/** A calendar date that exists (no 30 February), as its UTC midnight. */
const utcDay = (year: string, month: string, day: string): number | undefined => {
  const at = Date.UTC(Number(year), Number(month) - 1, Number(day));
  const date = new Date(at);
  return date.getUTCFullYear() === Number(year) && date.getUTCMonth() === Number(month) - 1 && date.getUTCDate() === Number(day)
    ? at
    : undefined;
};

/**
 * `2026-05-11` and `2026-05-11T00:00:00Z` alike: the UTC calendar date, as its midnight in ms. A time
 * with an offset counts on the UTC date it falls on; one without an offset is UTC. Anything else: undefined.
 */
const releaseDay = (text: unknown): number | undefined => {
  if (typeof text !== 'string') return undefined;
  const trimmed = text.trim();
  const dateOnly = DATE_ONLY.exec(trimmed);
  if (dateOnly !== null) return utcDay(dateOnly[1]!, dateOnly[2]!, dateOnly[3]!);
  const dateTime = DATE_TIME.exec(trimmed);
  if (dateTime === null || utcDay(dateTime[1]!, dateTime[2]!, dateTime[3]!) === undefined) return undefined;
  const at = Date.parse(dateTime[4] === undefined ? `${trimmed.replace(' ', 'T')}Z` : trimmed.replace(' ', 'T'));
  return Number.isNaN(at) ? undefined : Math.floor(at / DAY_MS) * DAY_MS;
};

export interface SofaReleases {
  /** Every release of each major the feed lists. */
  readonly byMajor: ReadonlyMap<string, readonly FeedRelease[]>;
  /** The board ids of each model identifier (lower case), from the v2 feed's `Devices` table. */
  readonly boardsByModel: ReadonlyMap<string, readonly string[]>;
  /** Equal for feeds that decide every device alike. */
  readonly key: string;
}

const RELEASE_TYPE_RESPONSE = /^RSR_([a-z])$/;
const NAME_RESPONSE = /\(([a-z])\)\s*$/;

/** The version text as the feed wrote it where it says all the version says, else the version written out. */
const textOf = (written: string, version: Version): string => {
  const alone = parseVersion(written);
  return alone !== undefined && compareVersions(alone, version) === 0 ? written.trim() : formatVersion(version);
};

/** A release's version with its response level, wherever the feed put it; undefined when unreadable. */
const releaseVersion = (release: Record<string, unknown>): Pick<FeedRelease, 'version' | 'text'> | undefined => {
  if (typeof release.ProductVersion !== 'string') return undefined;
  const fromType = typeof release.ReleaseType === 'string' ? RELEASE_TYPE_RESPONSE.exec(release.ReleaseType)?.[1] : undefined;
  const fromName = typeof release.UpdateName === 'string' ? NAME_RESPONSE.exec(release.UpdateName)?.[1] : undefined;
  const version = parseVersion(release.ProductVersion, fromType ?? fromName);
  return version === undefined ? undefined : { version, text: textOf(release.ProductVersion, version) };
};

const boardList = (value: unknown): ReadonlySet<string> | undefined =>
  Array.isArray(value) ? new Set(value.filter((board): board is string => typeof board === 'string' && board !== '')) : undefined;

/**
 * Whom a release applies to: every device of its major when its `DeviceScope` is `universal` or
 * absent; when `device-specific`, the board ids of its `SupportedDevices` (absent or null: those of
 * its major's `Latest`; an empty list: none).
 */
const scopeOf = (release: Record<string, unknown>, latestDevices: ReadonlySet<string> | undefined): ReadonlySet<string> | undefined => {
  if (release.DeviceScope !== 'device-specific') return undefined;
  return boardList(release.SupportedDevices) ?? latestDevices ?? new Set();
};

/** A `Latest` or security release: its version, whom it applies to, what it fixes and when it came. */
const releaseOf = (
  release: Record<string, unknown>,
  read: Pick<FeedRelease, 'version' | 'text'>,
  latestDevices: ReadonlySet<string> | undefined,
): FeedRelease => ({ ...read, devices: scopeOf(release, latestDevices), ...securityOf(release), date: releaseDay(release.ReleaseDate) });

/** The v2 feed's Background Security Improvements with their scopes. Malformed entries are skipped. */
const improvements = (value: unknown, latestDevices: (major: string) => ReadonlySet<string> | undefined): FeedRelease[] => {
  if (!isPlainObject(value)) return [];
  return Object.values(value).flatMap((entries) =>
    (Array.isArray(entries) ? entries : []).flatMap((entry) => {
      if (!isPlainObject(entry) || typeof entry.Version !== 'string') return [];
      const extra = typeof entry.VersionExtra === 'string' ? entry.VersionExtra.trim() : '';
      const version = parseVersion(entry.Version, responseLevel(extra));
      if (version === undefined) return [];
      return [
        {
          version,
          text: textOf(extra === '' ? entry.Version : `${entry.Version.trim()} ${extra}`, version),
          devices: scopeOf(entry, latestDevices(majorOf(version))),
          ...securityOf(entry),
          // A BSI has no ReleaseDate: it is dated by its PostingDate.
          date: releaseDay(entry.ReleaseDate) ?? releaseDay(entry.PostingDate),
        },
      ];
    }),
  );
};

/** `Devices`: board id → `{ DeviceID: <model identifier> }`, as the model's board ids. */
const boardsByModelOf = (value: unknown): Map<string, string[]> => {
  const byModel = new Map<string, string[]>();
  if (!isPlainObject(value)) return byModel;
  for (const [board, entry] of Object.entries(value)) {
    if (board === '' || !isPlainObject(entry) || typeof entry.DeviceID !== 'string' || entry.DeviceID === '') continue;
    const model = entry.DeviceID.toLowerCase();
    byModel.set(model, [...(byModel.get(model) ?? []), board]);
  }
  return byModel;
};

const describeFor = (releases: SofaReleases['byMajor'], boards: SofaReleases['boardsByModel']): string =>
  JSON.stringify({
    releases: [...releases]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([major, list]) => [
        major,
        list.map((release) => [
          release.text,
          release.devices === undefined ? null : [...release.devices].sort(),
          release.cves,
          release.exploited,
          release.date ?? null,
        ]),
      ]),
    boards: [...boards].sort(([a], [b]) => (a < b ? -1 : 1)),
  });

/**
 * The releases of each major the feed lists, with whom each applies to, or a sentence saying why
 * the document is not such a feed (which the caller treats like an unreachable feed).
 */
export const sofaReleases = (feed: unknown): SofaReleases | string => {
  if (!isPlainObject(feed) || !Array.isArray(feed.OSVersions) || feed.OSVersions.length === 0) return 'it has no OSVersions list';
  const byMajor = new Map<string, FeedRelease[]>();
  const latestDevicesOf = new Map<string, ReadonlySet<string> | undefined>();
  for (const [index, entry] of feed.OSVersions.entries()) {
    if (!isPlainObject(entry) || !isPlainObject(entry.Latest) || !Array.isArray(entry.SecurityReleases)) {
      return `OSVersions[${index}] has no Latest and SecurityReleases`;
    }
    const latest = releaseVersion(entry.Latest);
    if (latest === undefined) return `OSVersions[${index}].Latest has no ProductVersion that is a version`;
    const latestDevices = boardList(entry.Latest.SupportedDevices);
    // The entry's major is its Latest's; a release filed under it counts for it.
    const major = majorOf(latest.version);
    latestDevicesOf.set(major, latestDevices);
    const releases = [...(byMajor.get(major) ?? []), releaseOf(entry.Latest, latest, latestDevices)];
    for (const release of entry.SecurityReleases) {
      if (!isPlainObject(release) || typeof release.ProductVersion !== 'string')
        return `OSVersions[${index}].SecurityReleases holds an entry without a ProductVersion`;
      const read = releaseVersion(release);
      if (read !== undefined) releases.push(releaseOf(release, read, latestDevices));
    }
    byMajor.set(major, releases);
  }
  // A Background Security Improvement counts for its major only when the feed lists that major.
  for (const release of improvements(feed.BackgroundSecurityImprovements, (major) => latestDevicesOf.get(major))) {
    byMajor.get(majorOf(release.version))?.push(release);
  }
  const boardsByModel = boardsByModelOf(feed.Devices);
  return { byMajor, boardsByModel, key: createHash('sha256').update(describeFor(byMajor, boardsByModel)).digest('base64url').slice(0, 16) };
};

/** Whether a release applies to a device with `boards`: to every device, or to one of its boards. */
export const appliesTo = (release: FeedRelease, boards: readonly string[]): boolean =>
  release.devices === undefined || boards.some((board) => release.devices!.has(board));

/**
 * The release a device with `boards` is compared with: the highest of its major's releases that
 * apply to every device or to one of its boards; undefined when none applies.
 */
export const latestRelease = (releases: readonly FeedRelease[], boards: readonly string[]): FeedRelease | undefined => {
  let held: FeedRelease | undefined;
  for (const release of releases) {
    if (!appliesTo(release, boards)) continue;
    if (held === undefined || compareVersions(release.version, held.version) > 0) held = release;
  }
  return held;
};
