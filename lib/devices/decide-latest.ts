import type { LatestDecision, LatestReference } from '../latest-os/latest-reference.ts';
import type { DeviceSnapshot } from './device-snapshot.ts';

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
 * Every device's `os_is_latest` and `os_latest_version` against `reference`, one decision per
 * distinct version, response level, category and (for a feed) board and model: a fleet runs a few
 * hundred. A device whose category `decides` refuses (a mobile device that is not `iOS`) is not
 * latest and has no `os_latest_version`.
 */
export const decideLatest = (
  snapshot: DeviceSnapshot,
  reference: LatestReference,
  decides?: (category: string | undefined) => boolean,
): LatestDecisions => {
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
    const board = reference.perDevice ? snapshot.boardKey[index]! : 0;
    const model = reference.perDevice ? snapshot.modelKey[index]! : 0;
    const category = decides === undefined ? 0 : snapshot.osNameKey[index]!;
    const slot = numeric
      ? (((version * radix[0]! + response) * radix[1]! + board) * radix[2]! + model) * radix[3]! + category
      : `${version},${response},${board},${model},${category}`;
    let known = decided.get(slot);
    if (known === undefined) {
      const decision: LatestDecision =
        decides?.(snapshot.osNames[category]) === false
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
