import { isLatest, parseVersion } from './version.ts';

/**
 * What a device's OS is compared with to decide `os_is_latest`. The decision is a pure function of
 * the device's version and the reference; `key` names the reference, so decisions and responses
 * rendered with it are kept apart from those of another reference (a new LATEST_OS_VERSION).
 */
export interface LatestReference {
  readonly key: string;
  isLatest: (osVersion: string | undefined) => boolean;
}

/** One version for every device: `LATEST_OS_VERSION`. Text that does not parse makes no device latest. */
export const fixedReference = (version: string): LatestReference => {
  const parsed = parseVersion(version) ?? version;
  return { key: `fixed:${version}`, isLatest: (osVersion) => isLatest(osVersion, parsed) };
};
