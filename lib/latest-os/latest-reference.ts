import { createHash } from 'node:crypto';
import { formatVersion, isAtLeast, majorOf, parseVersion, type Version } from '../os-version.ts';

/**
 * What a device's OS is compared with to decide `os_is_latest` (docs/api.md). The decision is a
 * pure function of the device's version (with its response level) and the reference; `key` names
 * the reference, so decisions and responses made with it are kept apart from another's (a new
 * LATEST_OS_VERSION, a feed that moved).
 */
export interface LatestReference {
  readonly key: string;
  isLatest: (osVersion: string | undefined, rapidSecurityResponse: string | undefined) => boolean;
}

const deviceVersion = (osVersion: string | undefined, response: string | undefined): Version | undefined =>
  osVersion === undefined ? undefined : parseVersion(osVersion, response);

/**
 * One version for every device: `LATEST_OS_VERSION` (undefined: no device is latest). Text that
 * does not parse makes no device latest.
 */
export const fixedReference = (version: string | undefined): LatestReference => {
  const reference = version === undefined ? undefined : parseVersion(version);
  return {
    key: `fixed:${reference === undefined ? '-' : formatVersion(reference)}`,
    isLatest: (osVersion, response) => isAtLeast(deviceVersion(osVersion, response), reference),
  };
};

/**
 * The latest version of each major release (from the latest-OS feed): a device is compared with its
 * own major's latest, so a fully patched Mac on an older major is latest. A device whose major the
 * feed does not list is compared with `fallback` (LATEST_OS_VERSION) when there is one, else it is
 * not latest.
 */
export const perMajorReference = (latestByMajor: ReadonlyMap<string, Version>, fallback: string | undefined): LatestReference => {
  const fallbackVersion = fallback === undefined ? undefined : parseVersion(fallback);
  const listed = [...latestByMajor].map(([major, version]) => `${major}=${formatVersion(version)}`).sort();
  const text = `${listed.join(',')};fallback=${fallbackVersion === undefined ? '-' : formatVersion(fallbackVersion)}`;
  return {
    key: `feed:${createHash('sha256').update(text).digest('base64url').slice(0, 16)}`,
    isLatest: (osVersion, response) => {
      const version = deviceVersion(osVersion, response);
      if (version === undefined) return false;
      return isAtLeast(version, latestByMajor.get(majorOf(version)) ?? fallbackVersion);
    },
  };
};
