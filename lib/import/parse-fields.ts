/**
 * Field parsers for the chat CSV (CONTRACT §5 "Field rules"). Each takes the raw cell (undefined when
 * a short row has no such cell) and returns the canonical value or null. Pure and allocation-light:
 * they run once per cell on the hot path.
 */

const INT64 = /^([+-]?)0*(\d+)$/;
const INT64_MAX = '9223372036854775807';
const INT64_MIN_MAGNITUDE = '9223372036854775808';

/** True when the cell holds nothing but whitespace (an empty field, after the whitespace rule). */
export const isBlank = (raw: string | undefined): boolean => raw === undefined || raw.trim() === '';

/**
 * A signed 64-bit integer as canonical decimal text ("-0" → "0", leading zeros and a `+` dropped).
 * Kept as text so ids above 2^53 never pass through a double; anything else is null.
 */
export const parseInt64 = (raw: string | undefined): string | null => {
  if (raw === undefined) return null;
  const match = INT64.exec(raw.trim());
  if (match === null) return null;
  const negative = match[1] === '-';
  const digits = match[2]!;
  if (digits.length > 19) return null;
  // Same length decimal strings compare like the numbers they spell.
  if (digits.length === 19 && digits > (negative ? INT64_MIN_MAGNITUDE : INT64_MAX)) return null;
  if (digits === '0') return '0';
  return negative ? `-${digits}` : digits;
};

/** `true/false/1/0` in any case, surrounding whitespace ignored; anything else is null. */
export const parseBoolean = (raw: string | undefined): boolean | null => {
  if (raw === undefined) return null;
  switch (raw.trim().toLowerCase()) {
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

const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})?$/;

const isLeapYear = (year: number): boolean => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] as const;

export const daysInMonth = (year: number, month: number): number =>
  month === 2 && isLeapYear(year) ? 29 : DAYS_IN_MONTH[month - 1]!;

const pad = (value: number, width: number): string => String(value).padStart(width, '0');

/**
 * `YYYY-MM-DD[T ]HH:MM:SS[.fff…]` with optional `Z` or `±HH:MM` (none = UTC) → UTC
 * `YYYY-MM-DDTHH:MM:SS[.fff…]Z`, the fraction digits kept exactly as given. Offsets are applied by
 * arithmetic on the parts (not through Date, which would drop digits beyond milliseconds and map
 * years 0–99 to the 1900s). Out-of-range parts, or a result outside years 0000–9999, give null.
 */
export const parseTimestamp = (raw: string | undefined): string | null => {
  if (raw === undefined) return null;
  const match = TIMESTAMP.exec(raw.trim());
  if (match === null) return null;
  let year = Number(match[1]);
  let month = Number(match[2]);
  let day = Number(match[3]);
  const hour = Number(match[4]);
  const minute = Number(match[5]);
  const second = Number(match[6]);
  const fraction = match[7] ?? '';
  const offset = match[8];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;

  let minuteOfDay = hour * 60 + minute;
  if (offset !== undefined && offset !== 'Z') {
    const offsetHours = Number(offset.slice(1, 3));
    const offsetMinutes = Number(offset.slice(4, 6));
    if (offsetHours > 23 || offsetMinutes > 59) return null;
    const sign = offset[0] === '-' ? -1 : 1;
    // Local time = UTC + offset, so UTC = local − offset.
    minuteOfDay -= sign * (offsetHours * 60 + offsetMinutes);
  }
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
  return `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}T${pad(utcHour, 2)}:${pad(utcMinute, 2)}:${pad(second, 2)}${fraction}Z`;
};

/** BODY is kept byte for byte; only an empty cell is null (whitespace is content here). */
export const parseBody = (raw: string | undefined): string | null => (raw === undefined || raw === '' ? null : raw);

/** NAME trimmed; nothing left is null. */
export const parseName = (raw: string | undefined): string | null => {
  if (raw === undefined) return null;
  const name = raw.trim();
  return name === '' ? null : name;
};

/** EMAIL trimmed; it needs exactly one `@` with text on both sides, else null. */
export const parseEmail = (raw: string | undefined): string | null => {
  if (raw === undefined) return null;
  const email = raw.trim();
  const at = email.indexOf('@');
  if (at <= 0 || at === email.length - 1 || email.indexOf('@', at + 1) !== -1) return null;
  return email;
};
