import { createHash } from 'node:crypto';
import { compareDigitStrings, stripLeadingZeros } from '../values/digit-strings.ts';
import type { DecisionsAt } from './decide-latest.ts';
import type { DeviceSnapshot } from './device-snapshot.ts';

/**
 * The query of GET /devices or GET /mobile-devices once validated (docs/api.md). Every part
 * optional: none is the whole list. Each route's schema admits its own category and time filter.
 */
export interface DeviceQuery {
  /** A page of at most this many devices, 1..5000. */
  limit?: number;
  /** Only devices whose id is numerically greater (the keyset cursor), as digits. */
  after?: string;
  os_is_latest?: boolean;
  /** Patch compliance: only devices that have the fields and this `os_overdue` (or `os_exploited_cves` when true). */
  os_overdue?: boolean;
  os_exploited?: boolean;
  managed?: boolean;
  supervised?: boolean;
  /** Exact value, compared case-insensitively; kept as the caller wrote it (for the next link). */
  os_name?: string;
  device_type?: string;
  model_identifier?: string;
  /** An ISO 8601 instant with `Z` or an offset, as the caller wrote it. */
  last_contact_before?: string;
  last_inventory_before?: string;
}

/**
 * Where the two inventories' queries differ: the route (for the next link), the category filter
 * (exact value, any case) and the time filter (`…_before` an instant). The rest is shared.
 */
export interface QueryKind {
  readonly path: '/devices' | '/mobile-devices';
  readonly category: 'os_name' | 'device_type';
  readonly before: 'last_contact_before' | 'last_inventory_before';
}

export const COMPUTER_QUERY: QueryKind = { path: '/devices', category: 'os_name', before: 'last_contact_before' };
export const MOBILE_QUERY: QueryKind = { path: '/mobile-devices', category: 'device_type', before: 'last_inventory_before' };

/** The query parameters in the order they are written back (the next link, the ETag). */
const filtersOf = (kind: QueryKind) =>
  ['os_is_latest', 'os_overdue', 'os_exploited', 'managed', 'supervised', kind.category, 'model_identifier', kind.before] as const;
const parametersOf = (kind: QueryKind) => ['limit', ...filtersOf(kind), 'after'] as const;
const BOOLEANS = new Set(['os_is_latest', 'os_overdue', 'os_exploited', 'managed', 'supervised']);

/** A time of day followed by a space and `HH:MM`: a `+` offset written bare in the URL, read as a space. */
const SPACE_FOR_PLUS = /^(.+[Tt]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?) (\d{2}:\d{2})$/;

/**
 * The URL's text typed for the schema: digits of `limit` as a number, `true`/`false` of the boolean
 * filters as booleans; anything else stays text, for the schema to refuse by name. A query decodes
 * `+` as a space, so `last_contact_before=…T10:00:00+01:00` typed into a URL arrives with a space
 * where its offset's sign was: that space is read as the `+` it was (no instant holds a space there).
 */
export const typeQueryOf =
  (kind: QueryKind) =>
  (parameters: Readonly<Record<string, string>>): Record<string, unknown> =>
    Object.fromEntries(
      Object.entries(parameters).map(([name, value]) => {
        if (name === 'limit' && /^\d{1,9}$/.test(value)) return [name, Number(value)];
        if (BOOLEANS.has(name) && (value === 'true' || value === 'false')) return [name, value === 'true'];
        if (name === kind.before) return [name, value.replace(SPACE_FOR_PLUS, '$1+$2')];
        return [name, value];
      }),
    );

const INSTANT = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * An ISO 8601 date and time with `Z` or a `±HH:MM` offset, in ms since the epoch; undefined for
 * anything else, impossible dates (February 30th) included.
 */
const parseInstant = (text: string): number | undefined => {
  const match = INSTANT.exec(text);
  if (match === null) return undefined;
  const [, year, month, day, hour, minute, second = '00', fraction = '', zone = 'Z'] = match;
  const utc = Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second));
  const date = new Date(utc);
  if (date.getUTCMonth() !== Number(month) - 1 || date.getUTCDate() !== Number(day) || date.getUTCHours() !== Number(hour))
    return undefined;
  if (Number(minute) > 59 || Number(second) > 59) return undefined;
  const offsetMinutes =
    zone.toUpperCase() === 'Z' ? 0 : (zone.startsWith('-') ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6)));
  if (Math.abs(offsetMinutes) >= 24 * 60 || Number(zone.slice(4, 6) || '0') > 59) return undefined;
  return utc - offsetMinutes * 60_000 + (fraction === '' ? 0 : Math.floor(Number(`0${fraction}`) * 1000));
};

/** Whether `text` is such an instant: the query schema's `instant` keyword. */
export const isInstant = (text: string): boolean => parseInstant(text) !== undefined;

export interface DeviceSelection {
  /** The page's devices, as indexes into the snapshot, ascending. */
  indexes: number[];
  /** Devices matching the filters, on every page. */
  total: number;
  /** The cursor of the next page, when `limit` was given and more matching devices follow. */
  nextAfter: string | undefined;
}

/** The first position in `positions` (ascending indexes) whose device id is numerically greater than `after`. */
const firstAfter = (ids: readonly string[], positions: { length: number; at: (position: number) => number }, after: string): number => {
  let low = 0;
  let high = positions.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (compareDigitStrings(ids[positions.at(middle)]!, after) <= 0) low = middle + 1;
    else high = middle;
  }
  return low;
};

/** A dictionary key for a case-insensitive exact match; -1 when no device has that value. */
const keyOf = (values: readonly (string | undefined)[], wanted: string): number => values.indexOf(wanted.toLowerCase(), 1);

const tristate = (value: boolean): number => (value ? 1 : 0);

/**
 * The filters of a query in a fixed spelling (values compare case-insensitively): equal keys select
 * the same devices. Values are escaped, so that no value can spell another filter (an `os_name` of
 * `macOS&model_identifier=X` is not `macOS` filtered by model).
 */
export const filterKey = (query: DeviceQuery, kind: QueryKind): string =>
  filtersOf(kind)
    .filter((name) => query[name] !== undefined)
    .map((name) => `${name}=${encodeURIComponent(String(query[name]).toLowerCase())}`)
    .join('&');

/**
 * The indexes of the devices that pass the query's filters, ascending; undefined when it filters
 * nothing. One pass over the snapshot's columns, worth keeping per filter: every page of a filter
 * is then a binary search and a slice.
 */
export const filterMatches = (snapshot: DeviceSnapshot, at: DecisionsAt, query: DeviceQuery, kind: QueryKind): Uint32Array | undefined => {
  const { flags, classOf } = at.decisions;
  const tests: ((index: number) => boolean)[] = [];
  if (query.os_is_latest !== undefined) {
    const wanted = tristate(query.os_is_latest);
    tests.push((index) => flags[index] === wanted);
  }
  // A device without the compliance fields matches neither value of these two.
  if (query.os_overdue !== undefined) {
    const selected = at.overdue[query.os_overdue ? 'true' : 'false'];
    tests.push((index) => selected[classOf[index]!] === 1);
  }
  if (query.os_exploited !== undefined) {
    const selected = at.exploited[query.os_exploited ? 'true' : 'false'];
    tests.push((index) => selected[classOf[index]!] === 1);
  }
  if (query.managed !== undefined) {
    const wanted = tristate(query.managed);
    tests.push((index) => snapshot.managed[index] === wanted);
  }
  if (query.supervised !== undefined) {
    const wanted = tristate(query.supervised);
    tests.push((index) => snapshot.supervised[index] === wanted);
  }
  const category = query[kind.category];
  if (category !== undefined) {
    const wanted = keyOf(snapshot.osNames, category);
    tests.push((index) => snapshot.osNameKey[index] === wanted);
  }
  if (query.model_identifier !== undefined) {
    const wanted = keyOf(snapshot.models, query.model_identifier);
    tests.push((index) => snapshot.modelKey[index] === wanted);
  }
  const beforeText = query[kind.before];
  if (beforeText !== undefined) {
    const before = parseInstant(beforeText) ?? Number.NEGATIVE_INFINITY;
    // A device that has not reported a (readable) time is among those not heard from since.
    tests.push((index) => {
      const contact = snapshot.lastContact[index]!;
      return Number.isNaN(contact) || contact < before;
    });
  }
  if (tests.length === 0) return undefined;
  const matches = new Uint32Array(snapshot.count);
  let found = 0;
  for (let index = 0; index < snapshot.count; index += 1) {
    if (tests.every((test) => test(index))) matches[found++] = index;
  }
  return matches.slice(0, found);
};

/**
 * The devices of one page: up to `limit` of the matching devices (`matches`, or every device) after
 * the cursor. Keyset paging: a page is defined by the last id seen, so walking the pages of one
 * snapshot returns every matching device exactly once, in id order.
 */
export const selectPage = (snapshot: DeviceSnapshot, matches: Uint32Array | undefined, query: DeviceQuery): DeviceSelection => {
  const at = (position: number): number => (matches === undefined ? position : matches[position]!);
  const total = matches?.length ?? snapshot.count;
  const start = query.after === undefined ? 0 : firstAfter(snapshot.ids, { length: total, at }, stripLeadingZeros(query.after));
  const end = Math.min(total, query.limit === undefined ? total : start + query.limit);
  const indexes = new Array<number>(Math.max(end - start, 0));
  for (let position = start; position < end; position += 1) indexes[position - start] = at(position);
  const more = query.limit !== undefined && indexes.length > 0 && end < total;
  return { indexes, total, nextAfter: more ? snapshot.ids[indexes.at(-1)!] : undefined };
};

/** The query as URL parameters in a fixed order, values as the caller wrote them. */
const queryString = (query: DeviceQuery, kind: QueryKind): string =>
  parametersOf(kind)
    .filter((name) => query[name] !== undefined)
    .map((name) => `${name}=${encodeURIComponent(String(query[name]))}`)
    .join('&');

/** The `Link` header of the next page: the same filters and limit, a new cursor (GitHub's style). */
export const nextPageLink = (query: DeviceQuery, after: string, kind: QueryKind): string =>
  `<${kind.path}?${queryString({ ...query, after }, kind)}>; rel="next"`;

/** What an ETag is of: a page of the list, or the summary. */
export type DeviceView = 'list' | 'summary';

/**
 * A strong ETag for the body of `query` over a snapshot decided against references, at a moment
 * when `epoch` of their due dates had passed: it changes whenever the body would (other devices,
 * another reference, another page, a device turning overdue) and only then.
 */
export const deviceListEtag = (
  state: { snapshotId: string; referenceKey: string; epoch: number },
  view: DeviceView,
  query: DeviceQuery,
  kind: QueryKind,
): string =>
  `"${createHash('sha256')
    .update(`${state.snapshotId}\n${state.referenceKey}\n${state.epoch}\n${view}\n${queryString(query, kind)}`)
    .digest('base64url')
    .slice(0, 27)}"`;
