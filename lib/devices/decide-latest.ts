import type { LatestOsSystem } from '../latest-os/latest-os-feed.ts';
import type { DeviceAssessment, LatestReference } from '../latest-os/latest-reference.ts';
import { osFieldsOf } from '../latest-os/patch-compliance.ts';
import type { DeviceSnapshot } from './device-snapshot.ts';
import { FLAG_UNDECIDED } from './snapshot-layout.ts';

/**
 * Each device's latest-OS decision and patch compliance, taken once per snapshot and reference and
 * seen at a moment (`decisionsAt`), and the devices' JSON written with them (`renderDevices`).
 */

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

/**
 * Devices decided alike share one class: their flag, what follows its literal in their JSON (from
 * `os_latest_version` to `os_overdue`, written both ways: the time picks one), and what the filters
 * and summaries read. Class 0 is "not latest, nothing decided": its devices are served as stored.
 */
export interface DecisionClass {
  readonly latest: boolean;
  /** Whether a feed's release decided the device: it then carries the five compliance fields. */
  readonly assessed: boolean;
  /** `os_update_due_at` in ms; undefined when absent. */
  readonly dueAt: number | undefined;
  /** `os_exploited_cves` (empty when absent). */
  readonly exploited: readonly string[];
  /** The JSON after the flag literal: [0] with `os_overdue` false (or without it), [1] with it true. */
  readonly fields: readonly [string, string];
}

/** Every device's latest-OS decision and patch compliance against the references of its system. */
export interface LatestDecisions {
  /** 1: `os_is_latest` true, 0: false. */
  readonly flags: Uint8Array;
  /** Device i's decision as an index into `classes`. */
  readonly classOf: Uint32Array;
  readonly classes: readonly DecisionClass[];
  /** The classes' distinct due dates, ascending: passing one turns devices overdue. */
  readonly dueDates: Float64Array;
}

const NOTHING_DECIDED: DecisionClass = { latest: false, assessed: false, dueAt: undefined, exploited: [], fields: ['', ''] };

/** The fields after `"os_is_latest":<flag>` as `osFieldsOf` writes them, at a moment before or after the due date. */
const fieldsText = (assessment: DeviceAssessment, overdue: boolean): string => {
  const json = JSON.stringify(osFieldsOf(assessment, overdue ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY));
  return json.slice(`{"os_is_latest":${String(assessment.latest)}`.length, -1);
};

const classOf = (assessment: DeviceAssessment): DecisionClass => ({
  latest: assessment.latest,
  assessed: assessment.compliance !== undefined,
  dueAt: assessment.compliance?.updateDueAt,
  exploited: assessment.compliance?.exploitedCves ?? [],
  fields: [fieldsText(assessment, false), fieldsText(assessment, true)],
});

/**
 * Every device's `os_is_latest`, `os_latest_version` and patch compliance against the reference of
 * its system (one place decides them all: LatestReference.assess), one assessment per distinct
 * version, response level, category and (for a feed) board and model: a fleet runs a few hundred.
 * A device no reference decides (an Apple TV without a tvOS reference, a watch) is not latest and has
 * none of the other fields. Nothing here depends on the time: `overdueAt` does.
 */
export const decideLatest = (snapshot: DeviceSnapshot, references: DeviceReferences): LatestDecisions => {
  const flags = new Uint8Array(snapshot.count);
  const classIndex = new Uint32Array(snapshot.count);
  const classes: DecisionClass[] = [NOTHING_DECIDED];
  const classByText = new Map<string, number>([[`false${NOTHING_DECIDED.fields[0]}`, 0]]);
  const decided = new Map<number | string, number>();
  // The five keys as one number where their dictionaries' sizes allow it (every fleet seen): no
  // string per device; else as text.
  const radix = [snapshot.responses.length, snapshot.boards.length, snapshot.models.length, snapshot.osNames.length];
  const numeric = radix.reduce((product, size) => product * size, snapshot.osVersions.length) <= Number.MAX_SAFE_INTEGER;
  const decide = (index: number): number => {
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
      const assessment: DeviceAssessment =
        reference === undefined
          ? { latest: false, reference: undefined, compliance: undefined }
          : reference.assess({
              osVersion: snapshot.osVersions[version],
              response: snapshot.responses[response],
              boardId: snapshot.boards[board],
              modelIdentifier: snapshot.models[model],
            });
      const decision = classOf(assessment);
      const text = `${String(decision.latest)}${decision.fields[0]}`;
      known = classByText.get(text);
      if (known === undefined) {
        known = classes.push(decision) - 1;
        classByText.set(text, known);
      }
      decided.set(slot, known);
    }
    return known;
  };
  for (let index = 0; index < snapshot.count; index += 1) {
    const known = decide(index);
    classIndex[index] = known;
    flags[index] = classes[known]!.latest ? 1 : 0;
  }
  const dueDates = Float64Array.from(new Set(classes.flatMap(({ dueAt }) => (dueAt === undefined ? [] : [dueAt])))).sort();
  return { flags, classOf: classIndex, classes, dueDates };
};

/**
 * Which classes a value of a compliance filter selects: 1 at class c when its devices have that
 * value. A class without the compliance fields is 0 under both values (it matches neither).
 */
export interface ClassesWith {
  readonly true: Uint8Array;
  readonly false: Uint8Array;
}

/** The decisions at one moment: each class's `os_overdue`, and how many due dates had passed (part of every ETag). */
export interface DecisionsAt {
  readonly decisions: LatestDecisions;
  /** Due dates at or before the moment: the body changes only when this does. */
  readonly epoch: number;
  /** The classes by their `os_overdue` at the moment. */
  readonly overdue: ClassesWith;
  /** The classes by `os_exploited`: true when they have `os_exploited_cves`. */
  readonly exploited: ClassesWith;
}

/** How many of the decisions' due dates are at or before `now`: whether `decisionsAt` would change. */
export const overdueEpoch = (decisions: LatestDecisions, now: number): number => {
  let low = 0;
  let high = decisions.dueDates.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (decisions.dueDates[middle]! <= now) low = middle + 1;
    else high = middle;
  }
  return low;
};

/** The decisions as they stand at `now` (ms): a device turns overdue at its due date, with no new snapshot. */
export const decisionsAt = (decisions: LatestDecisions, now: number): DecisionsAt => {
  const { classes } = decisions;
  const epoch = overdueEpoch(decisions, now);
  const overdue = { true: new Uint8Array(classes.length), false: new Uint8Array(classes.length) };
  const exploited = { true: new Uint8Array(classes.length), false: new Uint8Array(classes.length) };
  classes.forEach((decision, index) => {
    if (!decision.assessed) return;
    overdue[decision.dueAt !== undefined && decision.dueAt <= now ? 'true' : 'false'][index] = 1;
    exploited[decision.exploited.length > 0 ? 'true' : 'false'][index] = 1;
  });
  return { decisions, epoch, overdue, exploited };
};

/**
 * The JSON array of the devices at `indexes` (ascending), each with its decision as it stands at the
 * moment `at` was taken: the flag, then `os_latest_version` and the compliance fields.
 */
export const renderDevices = (snapshot: DeviceSnapshot, at: DecisionsAt, indexes: ArrayLike<number>): string => {
  const { text, starts, flagAt } = snapshot;
  const { flags, classOf, classes } = at.decisions;
  const overdue = at.overdue.true;
  let chunkIndex = -1;
  let json = '';
  let base = 0;
  // Appended piece by piece (V8 builds a rope, flattened once when the body is sent): measured
  // faster than collecting the pieces for a join, and no intermediate string per device.
  let body = '[';
  for (let position = 0; position < indexes.length; position += 1) {
    const index = indexes[position]!;
    const inChunk = Math.floor(index / text.chunkDevices);
    if (inChunk !== chunkIndex) {
      chunkIndex = inChunk;
      json = text.chunk(inChunk);
      base = starts[inChunk * text.chunkDevices]!;
    }
    if (position > 0) body += ',';
    const decision = classOf[index]!;
    if (decision !== 0) {
      // The flag literal, then what it was decided against and the compliance, in the documented order.
      const flag = flagAt[index]! - base;
      body += json.slice(starts[index]! - base, flag);
      body += flags[index] === 1 ? 'true' : FLAG_UNDECIDED;
      body += classes[decision]!.fields[overdue[decision]!];
      body += json.slice(flag + FLAG_UNDECIDED.length, starts[index + 1]! - base);
    } else {
      body += json.slice(starts[index]! - base, starts[index + 1]! - base);
    }
  }
  return `${body}]`;
};
