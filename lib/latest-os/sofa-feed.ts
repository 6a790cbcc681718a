import { isPlainObject } from '../plain-object.ts';
import { compareVersions, majorOf, parseVersion, responseLevel, type Version } from '../os-version.ts';

/**
 * The macOS feed of SOFA (macadmins' "Simple Organized Feed for Apple Software Updates",
 * `macos_data_feed.json`, v1 or v2): `OSVersions[]`, one entry per major release, each with its
 * `Latest.ProductVersion` and its `SecurityReleases[].ProductVersion`. The latest of a major is the
 * highest version among its entry's releases, response levels (Rapid Security Responses, Background
 * Security Improvements) included. The feed writes a response level in one of several places, all
 * read here:
 * - in the version text (`26.3.1 (a)`);
 * - v1: a release's `ReleaseType` (`RSR_c`), its `UpdateName` ending in `(c)`;
 * - v2: `BackgroundSecurityImprovements[<major>][]`, `Version` and `VersionExtra` (`(a)`), counted
 *   for the majors `OSVersions` lists.
 */
export type LatestByMajor = ReadonlyMap<string, Version>;

const RELEASE_TYPE_RESPONSE = /^RSR_([a-z])$/;
const NAME_RESPONSE = /\(([a-z])\)\s*$/;

/** A release's version with its response level, wherever the feed put it; undefined when unreadable. */
const releaseVersion = (release: Record<string, unknown>): Version | undefined => {
  if (typeof release.ProductVersion !== 'string') return undefined;
  const fromType = typeof release.ReleaseType === 'string' ? RELEASE_TYPE_RESPONSE.exec(release.ReleaseType)?.[1] : undefined;
  const fromName = typeof release.UpdateName === 'string' ? NAME_RESPONSE.exec(release.UpdateName)?.[1] : undefined;
  return parseVersion(release.ProductVersion, fromType ?? fromName);
};

/** The v2 feed's Background Security Improvements, as versions. Malformed entries are skipped. */
const improvements = (value: unknown): Version[] => {
  if (!isPlainObject(value)) return [];
  return Object.values(value).flatMap((entries) =>
    (Array.isArray(entries) ? entries : []).flatMap((entry) => {
      if (!isPlainObject(entry) || typeof entry.Version !== 'string') return [];
      const version = parseVersion(entry.Version, typeof entry.VersionExtra === 'string' ? responseLevel(entry.VersionExtra) : undefined);
      return version === undefined ? [] : [version];
    }),
  );
};

const highest = (versions: readonly Version[]): Version => versions.reduce((held, version) => (compareVersions(version, held) > 0 ? version : held));

/**
 * The latest version of each major the feed lists, or a sentence saying why the document is not
 * such a feed (which the caller treats like an unreachable feed).
 */
export const latestByMajor = (feed: unknown): LatestByMajor | string => {
  if (!isPlainObject(feed) || !Array.isArray(feed.OSVersions) || feed.OSVersions.length === 0) return 'it has no OSVersions list';
  const byMajor = new Map<string, Version>();
  for (const [index, entry] of feed.OSVersions.entries()) {
    if (!isPlainObject(entry) || !isPlainObject(entry.Latest) || !Array.isArray(entry.SecurityReleases)) {
      return `OSVersions[${index}] has no Latest and SecurityReleases`;
    }
    const latest = releaseVersion(entry.Latest);
    if (latest === undefined) return `OSVersions[${index}].Latest has no ProductVersion that is a version`;
    // The entry's major is its Latest's; a release filed under it counts for it.
    const releases = [latest];
    for (const release of entry.SecurityReleases) {
      if (!isPlainObject(release) || typeof release.ProductVersion !== 'string') return `OSVersions[${index}].SecurityReleases holds an entry without a ProductVersion`;
      const version = releaseVersion(release);
      if (version !== undefined) releases.push(version);
    }
    const major = majorOf(latest);
    const held = byMajor.get(major);
    byMajor.set(major, highest(held === undefined ? releases : [held, ...releases]));
  }
  // A Background Security Improvement counts for its major only when the feed lists that major.
  for (const version of improvements(feed.BackgroundSecurityImprovements)) {
    const major = majorOf(version);
    const held = byMajor.get(major);
    if (held !== undefined && compareVersions(version, held) > 0) byMajor.set(major, version);
  }
  return byMajor;
};
