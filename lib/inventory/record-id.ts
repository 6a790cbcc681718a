import { isPlainObject } from '../values/plain-object.ts';
import { compareDigitStrings, stripLeadingZeros } from '../values/digit-strings.ts';

/**
 * An inventory record's id (its `field`: `id` for computers, `mobileDeviceId` for mobile devices) as
 * decimal digits, or undefined when it has none usable. Jamf sends ids as strings; a number is
 * accepted when it is a safe non-negative integer.
 */
export const inventoryIdOf = (record: unknown, field = 'id'): string | undefined => {
  const id = isPlainObject(record) ? record[field] : undefined;
  if (typeof id === 'string') return /^\d+$/.test(id) ? id : undefined;
  if (typeof id === 'number' && Number.isSafeInteger(id) && id >= 0) return String(id);
  return undefined;
};

/** What an inventory record becomes, handed its id already parsed: the mapper never reads it again. */
export type RecordMapper<T> = (record: Record<string, unknown>, id: string) => T | undefined;

/** A record's id (its `field`) and what `map` makes of the record; undefined for a record without a usable id. */
export const mapIdentified = <T>(record: unknown, field: string, map: RecordMapper<T>): { id: string; value: T } | undefined => {
  const id = inventoryIdOf(record, field);
  if (id === undefined) return undefined;
  const value = map(record as Record<string, unknown>, id);
  return value === undefined ? undefined : { id, value };
};

/**
 * Each id once (the first entry wins), in ascending numeric id order, whatever order upstream sent.
 * Ids are compared as the integers they spell (leading zeros aside), exactly, whatever their size.
 */
export const sortedUniqueById = <T>(entries: Iterable<{ id: string; value: T }>): T[] => {
  const byId = new Map<string, T>();
  for (const { id, value } of entries) {
    const key = stripLeadingZeros(id);
    if (!byId.has(key)) byId.set(key, value);
  }
  return [...byId.keys()].sort(compareDigitStrings).map((key) => byId.get(key)!);
};
