import type { DeviceSummary, VersionCounts } from '../../lib/devices/device-summary.ts';
import { compareVersions, parseVersion } from '../../lib/latest-os/os-version.ts';

/** What a summary reads of a served device. */
export interface ServedDevice {
  id: string;
  os_version?: string;
  os_is_latest: boolean;
  os_overdue?: boolean;
  os_exploited_cves?: string[];
}

const byText = (left: string, right: string) => (left < right ? -1 : left > right ? 1 : 0);

/**
 * For the tests: the summary as docs/api.md defines it, counted device by device from a served list
 * (the oracle the summary endpoint is held to).
 */
export const summaryOfList = (list: readonly ServedDevice[]): DeviceSummary => {
  const split = (devices: readonly ServedDevice[], test: (device: ServedDevice) => boolean) => ({
    true: devices.filter(test).length,
    false: devices.filter((device) => !test(device)).length,
  });
  const assessed = list.filter((device) => device.os_overdue !== undefined);
  const entryOf = (devices: readonly ServedDevice[]): Omit<VersionCounts, 'os_version'> => ({
    devices: devices.length,
    os_is_latest: devices.filter((device) => device.os_is_latest).length,
    os_overdue: devices.filter((device) => device.os_overdue === true).length,
    os_exploited: devices.filter((device) => device.os_exploited_cves !== undefined).length,
  });
  const texts = [...new Set(list.flatMap((device) => (device.os_version === undefined ? [] : [device.os_version])))];
  const parsed = texts
    .filter((text) => parseVersion(text) !== undefined)
    .sort((left, right) => compareVersions(parseVersion(right), parseVersion(left)) || byText(left, right));
  const unparsed = texts.filter((text) => parseVersion(text) === undefined).sort(byText);
  const without = list.filter((device) => device.os_version === undefined);
  const cves = new Map<string, number>();
  for (const device of list) for (const cve of device.os_exploited_cves ?? []) cves.set(cve, (cves.get(cve) ?? 0) + 1);
  return {
    devices: list.length,
    os_is_latest: split(list, (device) => device.os_is_latest),
    os_overdue: split(assessed, (device) => device.os_overdue === true),
    os_exploited: split(assessed, (device) => device.os_exploited_cves !== undefined),
    os_versions: [
      ...[...parsed, ...unparsed].map((text) => ({ os_version: text, ...entryOf(list.filter((device) => device.os_version === text)) })),
      ...(without.length === 0 ? [] : [entryOf(without)]),
    ],
    exploited_cves: [...cves]
      .sort(([leftCve, left], [rightCve, right]) => right - left || byText(leftCve, rightCve))
      .map(([cve, devices]) => ({ cve, devices })),
  };
};
