import { canonicalInt64 } from '../../values/int64.ts';

/**
 * Field parsers for the chat CSV (docs/import.md, field rules). Each takes the raw cell (undefined when
 * a short row has no such cell) and returns the canonical value or null. Pure and allocation-light:
 * they run once per cell on the hot path.
 */

/** Printable ASCII other than space: never whitespace, in any sense String#trim knows. */
const isPrintableAscii = (code: number): boolean => code > 32 && code < 127;

/**
 * `raw.trim()`, skipping the call in the usual case of a cell that starts and ends with a printable
 * ASCII character (several cells per row: the builtin call is a measurable share of the row).
 */
const trimmed = (raw: string): string =>
  raw.length > 0 && isPrintableAscii(raw.charCodeAt(0)) && isPrintableAscii(raw.charCodeAt(raw.length - 1)) ? raw : raw.trim();

/** True when the cell holds nothing but whitespace (an empty field, after the whitespace rule). */
export const isBlank = (raw: string | undefined): boolean => raw === undefined || raw.trim() === '';

/** A signed 64-bit integer (surrounding whitespace ignored) as canonical decimal text, else null. */
export const parseInt64 = (raw: string | undefined): string | null => (raw === undefined ? null : canonicalInt64(trimmed(raw)));

/** `true/false/1/0` in any case, surrounding whitespace ignored; anything else is null. */
export const parseBoolean = (raw: string | undefined): boolean | null => {
  if (raw === undefined) return null;
  switch (trimmed(raw).toLowerCase()) {
    case 'true':
    case '1':
      return true;
    case 'false':
    case '0':
      return false;
    default:
      return null;
  }
};

const isLeapYear = (year: number): boolean => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] as const;

const daysInMonth = (year: number, month: number): number => (month === 2 && isLeapYear(year) ? 29 : DAYS_IN_MONTH[month - 1]!);

const pad = (value: number, width: number): string => String(value).padStart(width, '0');

/** Two ASCII digits at `at` as a number, or -1. */
const twoDigits = (text: string, at: number): number => {
  const tens = text.charCodeAt(at) - 48;
  const ones = text.charCodeAt(at + 1) - 48;
  return tens >= 0 && tens <= 9 && ones >= 0 && ones <= 9 ? tens * 10 + ones : -1;
};

/**
 * `YYYY-MM-DD[T ]HH:MM:SS[.fff…]` with optional `Z` or `±HH:MM` (none = UTC) → UTC
 * `YYYY-MM-DDTHH:MM:SS[.fff…]Z`, the fraction digits kept exactly as given. Offsets are applied by
 * arithmetic on the parts (not through Date, which would drop digits beyond milliseconds and map
 * years 0–99 to the 1900s). Out-of-range parts, or a result outside years 0000–9999, give null.
 * Scanned by character code rather than a regular expression: it runs twice per CSV row.
 */
export const parseTimestamp = (raw: string | undefined): string | null => {
  if (raw === undefined) return null;
  const text = trimmed(raw);
  const length = text.length;
  if (length < 19) return null;
  const century = twoDigits(text, 0);
  const yearInCentury = twoDigits(text, 2);
  let month = twoDigits(text, 5);
  let day = twoDigits(text, 8);
  const hour = twoDigits(text, 11);
  const minute = twoDigits(text, 14);
  const second = twoDigits(text, 17);
  const separator = text.charCodeAt(10);
  if (
    century < 0 ||
    yearInCentury < 0 ||
    month < 1 ||
    month > 12 ||
    day < 1 ||
    hour < 0 ||
    hour > 23 ||
    minute < 0 ||
    minute > 59 ||
    second < 0 ||
    second > 59 ||
    text.charCodeAt(4) !== 45 ||
    text.charCodeAt(7) !== 45 ||
    (separator !== 84 && separator !== 32) ||
    text.charCodeAt(13) !== 58 ||
    text.charCodeAt(16) !== 58
  ) {
    return null;
  }
  let year = century * 100 + yearInCentury;
  if (day > daysInMonth(year, month)) return null;

  // Optional fraction: a dot and at least one digit.
  let fractionEnd = 19;
  if (text.charCodeAt(19) === 46) {
    fractionEnd = 20;
    while (fractionEnd < length) {
      const code = text.charCodeAt(fractionEnd);
      if (code < 48 || code > 57) break;
      fractionEnd += 1;
    }
    if (fractionEnd === 20) return null;
  }
  if (fractionEnd === length - 1 && text.charCodeAt(fractionEnd) === 90 && separator === 84) return text; // canonical already
  const time = text.slice(11, fractionEnd);
  if (fractionEnd === length || (fractionEnd === length - 1 && text.charCodeAt(fractionEnd) === 90)) {
    return `${text.slice(0, 10)}T${time}Z`;
  }

  // ±HH:MM offset: UTC = local − offset.
  const sign = text.charCodeAt(fractionEnd);
  const offsetHours = twoDigits(text, fractionEnd + 1);
  const offsetMinutes = twoDigits(text, fractionEnd + 4);
  if (
    fractionEnd + 6 !== length ||
    (sign !== 43 && sign !== 45) ||
    text.charCodeAt(fractionEnd + 3) !== 58 ||
    offsetHours < 0 ||
    offsetHours > 23 ||
    offsetMinutes < 0 ||
    offsetMinutes > 59
  ) {
    return null;
  }
  let minuteOfDay = hour * 60 + minute - (sign === 45 ? -1 : 1) * (offsetHours * 60 + offsetMinutes);
  if (minuteOfDay < 0) {
    minuteOfDay += 24 * 60;
    day -= 1;
    if (day === 0) {
      month -= 1;
      if (month === 0) {
        month = 12;
        year -= 1;
      }
      day = daysInMonth(year, month);
    }
  } else if (minuteOfDay >= 24 * 60) {
    minuteOfDay -= 24 * 60;
    day += 1;
    if (day > daysInMonth(year, month)) {
      day = 1;
      month += 1;
      if (month === 13) {
        month = 1;
        year += 1;
      }
    }
  }
  if (year < 0 || year > 9999) return null;
  const utcHour = Math.floor(minuteOfDay / 60);
  const utcMinute = minuteOfDay % 60;
  return `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}T${pad(utcHour, 2)}:${pad(utcMinute, 2)}${time.slice(5)}Z`;
};

/** BODY is kept byte for byte; only an empty cell is null (whitespace is content here). */
export const parseBody = (raw: string | undefined): string | null => (raw === undefined || raw === '' ? null : raw);

/** NAME trimmed; nothing left is null. */
export const parseName = (raw: string | undefined): string | null => {
  if (raw === undefined) return null;
  const name = trimmed(raw);
  return name === '' ? null : name;
};

/** EMAIL trimmed; it needs exactly one `@` with text on both sides, else null. */
export const parseEmail = (raw: string | undefined): string | null => {
  if (raw === undefined) return null;
  const email = trimmed(raw);
  const at = email.indexOf('@');
  if (at <= 0 || at === email.length - 1 || email.indexOf('@', at + 1) !== -1) return null;
  return email;
};
