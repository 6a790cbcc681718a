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
