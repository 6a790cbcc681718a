import { compareVersions, parseVersion, type Version } from '../latest-os/os-version.ts';
import type { DecisionsAt } from './decide-latest.ts';
import type { DeviceSnapshot } from './device-snapshot.ts';

/** One `os_version` of the summary: its devices, and how many of them are latest, overdue, exposed. */
export interface VersionCounts {
  /** As served; absent on the one entry of the devices that have none. */
  os_version?: string;
  devices: number;
  os_is_latest: number;
  os_overdue: number;
  os_exploited: number;
}

/** GET /devices/summary (docs/api.md#the-summary): what the list implies, counted. */
export interface DeviceSummary {
  devices: number;
  os_is_latest: { true: number; false: number };
  /** Only devices that have the compliance fields: `true` + `false` may be less than `devices`. */
  os_overdue: { true: number; false: number };
  os_exploited: { true: number; false: number };
  os_versions: VersionCounts[];
  exploited_cves: { cve: string; devices: number }[];
}

const byText = (left: string, right: string): number => (left < right ? -1 : left > right ? 1 : 0);

/** Highest version first (equal ranks by text), then the texts that are no version, by text. */
const versionOrder = (left: { text: string; version: Version | undefined }, right: { text: string; version: Version | undefined }) => {
  if (left.version !== undefined && right.version !== undefined)
    return compareVersions(right.version, left.version) || byText(left.text, right.text);
  if (left.version !== undefined || right.version !== undefined) return left.version === undefined ? 1 : -1;
  return byText(left.text, right.text);
};

// Counts per os_version, side by side: devices, latest, overdue, exploited.
const FIELDS = 4;

/**
 * The summary of the devices at `matches` (every device when undefined), from the same decisions
 * the list renders (`at`): one pass over the devices into counts per version and per decision class,
 * then the classes' CVEs. A few hundred classes and versions in any fleet seen.
 */
export const summarizeDevices = (snapshot: DeviceSnapshot, at: DecisionsAt, matches: Uint32Array | undefined): DeviceSummary => {
  const { flags, classOf, classes } = at.decisions;
  const perVersion = new Uint32Array(snapshot.osVersions.length * FIELDS);
  const perClass = new Uint32Array(classes.length);
  const total = matches?.length ?? snapshot.count;
  for (let position = 0; position < total; position += 1) {
    const index = matches === undefined ? position : matches[position]!;
    const decision = classOf[index]!;
    const slot = snapshot.osVersionKey[index]! * FIELDS;
    perVersion[slot]! += 1;
    perVersion[slot + 1]! += flags[index]!;
    perVersion[slot + 2]! += at.overdue.true[decision]!;
    perVersion[slot + 3]! += at.exploited.true[decision]!;
    perClass[decision]! += 1;
  }

  const summary: DeviceSummary = {
    devices: total,
    os_is_latest: { true: 0, false: 0 },
    os_overdue: { true: 0, false: 0 },
    os_exploited: { true: 0, false: 0 },
    os_versions: [],
    exploited_cves: [],
  };
  const exposed = new Map<string, number>();
  perClass.forEach((devices, decision) => {
    const { latest, assessed, exploited } = classes[decision]!;
    summary.os_is_latest[latest ? 'true' : 'false'] += devices;
    if (devices === 0 || !assessed) return;
    summary.os_overdue[at.overdue.true[decision] === 1 ? 'true' : 'false'] += devices;
    summary.os_exploited[exploited.length > 0 ? 'true' : 'false'] += devices;
    for (const cve of exploited) exposed.set(cve, (exposed.get(cve) ?? 0) + devices);
  });

  const counted = (slot: number) => ({
    devices: perVersion[slot]!,
    os_is_latest: perVersion[slot + 1]!,
    os_overdue: perVersion[slot + 2]!,
    os_exploited: perVersion[slot + 3]!,
  });
  const served: { text: string; version: Version | undefined; slot: number }[] = [];
  for (let key = 1; key < snapshot.osVersions.length; key += 1) {
    const text = snapshot.osVersions[key];
    if (text !== undefined && perVersion[key * FIELDS]! > 0) served.push({ text, version: parseVersion(text), slot: key * FIELDS });
  }
  served.sort(versionOrder);
  summary.os_versions = served.map(({ text, slot }) => ({ os_version: text, ...counted(slot) }));
  if (perVersion[0]! > 0) summary.os_versions.push(counted(0));
  summary.exploited_cves = [...exposed]
    .sort(([leftCve, left], [rightCve, right]) => right - left || byText(leftCve, rightCve))
    .map(([cve, devices]) => ({ cve, devices }));
  return summary;
};
