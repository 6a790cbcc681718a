import { isPlainObject } from '../plain-object.ts';
import { compareDigitStrings, stripLeadingZeros } from './digit-strings.ts';


/**
 * An inventory record's id as decimal digits, or undefined when it has none usable. Jamf sends ids
 * as strings; a number is accepted when it is a safe non-negative integer.
 */
export const inventoryIdOf = (record: unknown): string | undefined => {
  const id = isPlainObject(record) ? record.id : undefined;
  if (typeof id === 'string') return /^\d+$/.test(id) ? id : undefined;
  if (typeof id === 'number' && Number.isSafeInteger(id) && id >= 0) return String(id);
  return undefined;
};

/**
 * Each id once (the first record read wins), in ascending numeric id order, whatever order
 * upstream sent. Records without a usable id are dropped: they can be neither ordered nor deduplicated.
 */
export const dedupeAndSortById = <T>(records: Iterable<T>): T[] => {
  const byId = new Map<string, T>();
  for (const record of records) {
    const id = inventoryIdOf(record);
    if (id === undefined) continue;
    const key = stripLeadingZeros(id);
    if (!byId.has(key)) byId.set(key, record);
  }
  return [...byId.keys()].sort(compareDigitStrings).map((key) => byId.get(key)!);
};
