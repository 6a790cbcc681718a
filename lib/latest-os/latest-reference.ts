import { isAtLeast, majorOf, parseVersion, type Version } from './os-version.ts';
import { assessOnMajor, DEFAULT_SERVICE_LEVELS, type Compliance, type ServiceLevels } from './patch-compliance.ts';
import type { SofaReleases } from './sofa-feed.ts';

/** What the latest-OS decision reads of a device (docs/api.md#os_is_latest). */
export interface DeviceFacts {
  osVersion: string | undefined;
  /** The device's own response level field (`(a)`). */
  response: string | undefined;
  /** `operatingSystem.softwareUpdateDeviceId`: the Mac's board id (`J413AP`). */
  boardId: string | undefined;
  /** `model_identifier` (`Mac14,2`), compared without regard to case. */
  modelIdentifier: string | undefined;
}

/** A device's `os_is_latest`, and the version it was decided against (`os_latest_version`). */
export interface LatestDecision {
  latest: boolean;
  /** As the feed or LATEST_OS_VERSION writes it; undefined when the device has no parsable version or no reference applies. */
  reference: string | undefined;
}

/**
 * The latest decision with the device's patch compliance (docs/api.md#patch-compliance), both from
 * the same releases; `compliance` only where a feed's release decided the device.
 */
export interface DeviceAssessment extends LatestDecision {
  compliance: Compliance | undefined;
}

/**
 * What a device's OS is compared with to decide `os_is_latest` (docs/api.md). The decision is a
 * pure function of the device and the reference; `key` names the reference, so decisions and
 * responses made with it are kept apart from another's (a new LATEST_OS_VERSION, a feed that moved,
 * other service levels). `perDevice` says whether a device's board and model can change its decision
 * (a feed), or only its version can (LATEST_OS_VERSION alone). `decide` is `assess` without the
 * compliance; neither depends on the time (only `os_overdue` does: osFieldsOf).
 */
export interface LatestReference {
  readonly key: string;
  readonly perDevice: boolean;
  decide: (device: DeviceFacts) => LatestDecision;
  assess: (device: DeviceFacts) => DeviceAssessment;
}

const NOT_ASSESSED: DeviceAssessment = { latest: false, reference: undefined, compliance: undefined };

const decisionOf = ({ latest, reference }: DeviceAssessment): LatestDecision => ({ latest, reference });

const deviceVersion = (device: DeviceFacts): Version | undefined =>
  device.osVersion === undefined ? undefined : parseVersion(device.osVersion, device.response);

/** LATEST_OS_VERSION as a reference: the text as written, and its version (undefined: none). */
const fallbackOf = (text: string | undefined): { version: Version; text: string } | undefined => {
  const version = text === undefined ? undefined : parseVersion(text);
  return version === undefined ? undefined : { version, text: text!.trim() };
};

const decideAgainst = (version: Version, reference: { version: Version; text: string } | undefined): DeviceAssessment =>
  reference === undefined
    ? NOT_ASSESSED
    : { latest: isAtLeast(version, reference.version), reference: reference.text, compliance: undefined };

/**
 * One version for every device: `LATEST_OS_VERSION` (undefined: no device is latest). Text that
 * does not parse makes no device latest.
 */
export const fixedReference = (version: string | undefined): LatestReference => {
  const fallback = fallbackOf(version);
  const assess = (device: DeviceFacts): DeviceAssessment => {
    const own = deviceVersion(device);
    return own === undefined ? NOT_ASSESSED : decideAgainst(own, fallback);
  };
  return { key: `fixed:${fallback?.text ?? '-'}`, perDevice: false, assess, decide: (device) => decisionOf(assess(device)) };
};

/**
 * How a device is matched with the releases the feed scopes to some devices: by the Mac's board id
 * (SOFA's macOS feed, its `Devices` table mapping model identifiers to board ids), or by product
 * type, which is the device's model identifier itself (`iPhone17,1`, `AppleTV14,1`: SOFA's iOS and
 * tvOS feeds).
 */
export type FeedMatch = 'board' | 'product-type';

/**
 * The SOFA feed's releases: a device is compared with the highest release of its own major that
 * applies to it, matched by board id (`board`) or model identifier (`product-type`); a major the feed
 * does not list (or one with no release for the device) falls back to `fallback`, else the device is
 * not latest. A device the feed's release decides also gets its compliance, due dates after `levels`.
 * The rules, by example: docs/api.md#os_is_latest, docs/api.md#patch-compliance.
 */
export const feedReference = (
  releases: SofaReleases,
  fallback: string | undefined,
  match: FeedMatch = 'board',
  levels: ServiceLevels = DEFAULT_SERVICE_LEVELS,
): LatestReference => {
  const fallbackVersion = fallbackOf(fallback);
  // The feed's product types by their lower case: the snapshot keeps model identifiers lower-cased.
  const productTypes = new Map<string, string>();
  if (match === 'product-type') {
    for (const list of releases.byMajor.values())
      for (const release of list) for (const device of release.devices ?? []) productTypes.set(device.toLowerCase(), device);
  }
  const devicesOf = (device: DeviceFacts): readonly string[] => {
    const model = device.modelIdentifier?.toLowerCase() ?? '';
    if (match === 'product-type') return model === '' ? [] : [productTypes.get(model) ?? model];
    const boardId = device.boardId === '' ? undefined : device.boardId;
    return boardId !== undefined ? [boardId] : (releases.boardsByModel.get(model) ?? []);
  };
  const assess = (device: DeviceFacts): DeviceAssessment => {
    const version = deviceVersion(device);
    if (version === undefined) return NOT_ASSESSED;
    const ofMajor = releases.byMajor.get(majorOf(version));
    const assessed = ofMajor === undefined ? undefined : assessOnMajor(ofMajor, version, devicesOf(device), levels);
    if (assessed === undefined) return decideAgainst(version, fallbackVersion);
    return { ...decideAgainst(version, assessed.release), compliance: assessed.compliance };
  };
  const sla = `${levels.exploitedDays},${levels.securityDays},${levels.otherDays}`;
  return {
    key: `feed:${releases.key}${match === 'board' ? '' : `;${match}`};fallback=${fallbackVersion?.text ?? '-'};sla=${sla}`,
    perDevice: true,
    assess,
    decide: (device) => decisionOf(assess(device)),
  };
};
