import { compareVersions, type Version } from './os-version.ts';
import { appliesTo, latestRelease, type FeedRelease } from './sofa-feed.ts';

/**
 * Days from a release to the deadline of a device that lacks it (docs/api.md#patch-compliance), as
 * Nudge's SOFA mode counts them: when the release fixes an actively exploited CVE, any other CVE, or none.
 */
export interface ServiceLevels {
  /** PATCH_SLA_EXPLOITED_DAYS */
  readonly exploitedDays: number;
  /** PATCH_SLA_SECURITY_DAYS */
  readonly securityDays: number;
  /** PATCH_SLA_DAYS */
  readonly otherDays: number;
}

export const DEFAULT_SERVICE_LEVELS: ServiceLevels = { exploitedDays: 14, securityDays: 21, otherDays: 28 };

/** How exposed a device is, from the releases of its major that apply to it and are above its version. */
export interface Compliance {
  /** Distinct versions among them. */
  readonly missingReleases: number;
  /** Distinct CVE ids they fix. */
  readonly unpatchedCves: number;
  /** Those of the ids that are actively exploited, ascending as text. */
  readonly exploitedCves: readonly string[];
  /** The earliest release day plus its service level (ms, a UTC midnight); undefined when none has a readable date. */
  readonly updateDueAt: number | undefined;
}

const DAY_MS = 86_400_000;

/** Equal versions (`26.0`, `26.0.0`) count once: the numbers without leading or trailing zeros, and the level. */
const versionKey = (version: Version): string => {
  const numbers = version.numbers.map((part) => BigInt(part).toString());
  while (numbers.length > 1 && numbers.at(-1) === '0') numbers.pop();
  return `${numbers.join('.')}${version.response === undefined ? '' : ` (${version.response})`}`;
};

const daysFor = (release: FeedRelease, levels: ServiceLevels): number =>
  release.exploited.length > 0 ? levels.exploitedDays : release.cves.length > 0 ? levels.securityDays : levels.otherDays;

/**
 * The one decision of a device on a major the feed lists: the release it is compared with (the highest
 * that applies to it; undefined when none does) and, from the same releases, what it lacks. So
 * `missingReleases` is 0 exactly when the device's version is at or above that release.
 */
export const assessOnMajor = (
  releases: readonly FeedRelease[],
  version: Version,
  boards: readonly string[],
  levels: ServiceLevels,
): { release: FeedRelease; compliance: Compliance } | undefined => {
  const release = latestRelease(releases, boards);
  if (release === undefined) return undefined;
  const missing = new Set<string>();
  const cves = new Set<string>();
  const exploited = new Set<string>();
  let updateDueAt: number | undefined;
  for (const candidate of releases) {
    if (!appliesTo(candidate, boards) || compareVersions(candidate.version, version) <= 0) continue;
    missing.add(versionKey(candidate.version));
    for (const id of candidate.cves) cves.add(id);
    for (const id of candidate.exploited) exploited.add(id);
    if (candidate.date === undefined) continue;
    const due = candidate.date + daysFor(candidate, levels) * DAY_MS;
    if (updateDueAt === undefined || due < updateDueAt) updateDueAt = due;
  }
  return {
    release,
    compliance: { missingReleases: missing.size, unpatchedCves: cves.size, exploitedCves: [...exploited].sort(), updateDueAt },
  };
};

/** A device's `os_*` fields as the lists serve them (docs/api.md#patch-compliance); absent keys are omitted. */
export interface DeviceOsFields {
  os_is_latest: boolean;
  os_latest_version?: string;
  os_missing_releases?: number;
  os_unpatched_cves?: number;
  os_exploited_cves?: string[];
  os_update_due_at?: string;
  os_overdue?: boolean;
}

/**
 * The fields of a decision at `now` (ms): the compliance fields only where a feed decided the device,
 * `os_exploited_cves` only when there is one, `os_overdue` true from the moment `os_update_due_at` is reached.
 */
export const osFieldsOf = (
  decision: { latest: boolean; reference: string | undefined; compliance: Compliance | undefined },
  now: number,
): DeviceOsFields => {
  const fields: DeviceOsFields = { os_is_latest: decision.latest };
  if (decision.reference !== undefined) fields.os_latest_version = decision.reference;
  const { compliance } = decision;
  if (compliance === undefined) return fields;
  fields.os_missing_releases = compliance.missingReleases;
  fields.os_unpatched_cves = compliance.unpatchedCves;
  if (compliance.exploitedCves.length > 0) fields.os_exploited_cves = [...compliance.exploitedCves];
  if (compliance.updateDueAt !== undefined) fields.os_update_due_at = new Date(compliance.updateDueAt).toISOString();
  fields.os_overdue = compliance.updateDueAt !== undefined && compliance.updateDueAt <= now;
  return fields;
};
