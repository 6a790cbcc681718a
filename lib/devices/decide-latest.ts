import type { LatestOsSystem } from '../latest-os/latest-os-feed.ts';
import type { LatestDecision, LatestReference } from '../latest-os/latest-reference.ts';
import type { DeviceSnapshot } from './device-snapshot.ts';

/**
 * The references a list's devices are decided against: one per system (a Mac's macOS; an iPhone's
 * iOS, an Apple TV's tvOS), chosen by the device's lower-cased category. `key` names them all, so
 * decisions and ETags change when any of them does; `perDevice` when any decides by board or model.
 */
export interface DeviceReferences {
  readonly key: string;
  readonly perDevice: boolean;
  /** The reference deciding a device of `category`; undefined: none does (not latest, no `os_latest_version`). */
  of: (category: string | undefined) => LatestReference | undefined;
}

/** One reference for every device of the list. */
export const everyDevice = (reference: LatestReference): DeviceReferences => ({
  key: reference.key,
  perDevice: reference.perDevice,
  of: () => reference,
});

/** One reference per system, a device's system told by its category (`systemOf`, the inventory kind's). */
export const bySystem = (
  references: Partial<Record<LatestOsSystem, LatestReference>>,
  systemOf: (category: string | undefined) => LatestOsSystem | undefined,
): DeviceReferences => {
  const entries = Object.entries(references) as [LatestOsSystem, LatestReference][];
  return {
    key: entries.map(([system, reference]) => `${system}=${reference.key}`).join('|'),
    perDevice: entries.some(([, reference]) => reference.perDevice),
    of: (category) => {
      const system = systemOf(category);
      return system === undefined ? undefined : references[system];
    },
  };
};

/** Every device's latest-OS decision against one reference. */
export interface LatestDecisions {
  /** 1: `os_is_latest` true, 0: false. */
  readonly flags: Uint8Array;
  /** Device i's `os_latest_version` as an index into `fragments`. */
  readonly referenceOf: Uint32Array;
  /** What follows the device's flag literal: `,"os_latest_version":"…"`, or nothing (entry 0). */
  readonly fragments: readonly string[];
}

const LATEST_VERSION_KEY = ',"os_latest_version":';

/**
 * Every device's `os_is_latest` and `os_latest_version` against the reference of its system, one
 * decision per distinct version, response level, category and (for a feed) board and model: a fleet
 * runs a few hundred. A device no reference decides (an Apple TV without a tvOS reference, a watch)
 * is not latest and has no `os_latest_version`.
 */
export const decideLatest = (snapshot: DeviceSnapshot, references: DeviceReferences): LatestDecisions => {
  const flags = new Uint8Array(snapshot.count);
  const referenceOf = new Uint32Array(snapshot.count);
  const fragments = [''];
  const fragmentOf = new Map<string, number>();
  const decided = new Map<number | string, { flag: number; fragment: number }>();
  // The five keys as one number where their dictionaries' sizes allow it (every fleet seen): no
  // string per device; else as text.
  const radix = [snapshot.responses.length, snapshot.boards.length, snapshot.models.length, snapshot.osNames.length];
  const numeric = radix.reduce((product, size) => product * size, snapshot.osVersions.length) <= Number.MAX_SAFE_INTEGER;
  const decide = (index: number): { flag: number; fragment: number } => {
    const version = snapshot.osVersionKey[index]!;
    const response = snapshot.responseKey[index]!;
    const board = references.perDevice ? snapshot.boardKey[index]! : 0;
    const model = references.perDevice ? snapshot.modelKey[index]! : 0;
    const category = snapshot.osNameKey[index]!;
    const slot = numeric
      ? (((version * radix[0]! + response) * radix[1]! + board) * radix[2]! + model) * radix[3]! + category
      : `${version},${response},${board},${model},${category}`;
    let known = decided.get(slot);
    if (known === undefined) {
      const reference = references.of(snapshot.osNames[category]);
      const decision: LatestDecision =
        reference === undefined
          ? { latest: false, reference: undefined }
          : reference.decide({
              osVersion: snapshot.osVersions[version],
              response: snapshot.responses[response],
              boardId: snapshot.boards[board],
              modelIdentifier: snapshot.models[model],
            });
      let fragment = 0;
      if (decision.reference !== undefined) {
        fragment = fragmentOf.get(decision.reference) ?? fragments.length;
        if (fragment === fragments.length) {
          fragments.push(`${LATEST_VERSION_KEY}${JSON.stringify(decision.reference)}`);
          fragmentOf.set(decision.reference, fragment);
        }
      }
      known = { flag: decision.latest ? 1 : 0, fragment };
      decided.set(slot, known);
    }
    return known;
  };
  for (let index = 0; index < snapshot.count; index += 1) {
    const { flag, fragment } = decide(index);
    flags[index] = flag;
    referenceOf[index] = fragment;
  }
  return { flags, referenceOf, fragments };
};
