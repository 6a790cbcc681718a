import { describe, expect, it } from 'vitest';
import {
  isBlank,
  parseBody,
  parseBoolean,
  parseEmail,
  parseInt64,
  parseName,
  parseTimestamp,
} from '../../../../lib/import/read/parse-fields.ts';

describe('parseInt64', () => {
  it.each([
    ['9223372036854775807', '9223372036854775807'],
    ['-9223372036854775808', '-9223372036854775808'],
    ['9007199254740993', '9007199254740993'],
    ['  42 ', '42'],
    ['\t-7\t', '-7'],
    ['+15', '15'],
    ['007', '7'],
    ['-0', '0'],
    ['0000', '0'],
    ['00009223372036854775807', '9223372036854775807'],
  ])('reads %j as the exact canonical text %j', (raw, expected) => {
    expect(parseInt64(raw)).toBe(expected);
  });

  it.each([
    ['9223372036854775808', 'one above the maximum'],
    ['-9223372036854775809', 'one below the minimum'],
    ['99999999999999999999', 'twenty digits'],
    ['1.5', 'a fraction'],
    ['1e3', 'an exponent'],
    ['0x10', 'hexadecimal'],
    ['12 34', 'inner whitespace'],
    ['--1', 'a double sign'],
    ['-', 'a lone sign'],
    ['abc', 'text'],
    ['', 'an empty cell'],
    ['   ', 'whitespace only'],
    ['١٢', 'non-ASCII digits'],
  ])('gives null for %j (%s)', (raw) => {
    expect(parseInt64(raw)).toBeNull();
  });

  it('gives null for a missing cell', () => {
    expect(parseInt64(undefined)).toBeNull();
  });
});

describe('parseBoolean', () => {
  it.each([
    ['true', true],
    ['TRUE', true],
    ['True', true],
    [' 1 ', true],
    ['false', false],
    ['FaLsE', false],
    ['0', false],
  ])('reads %j as %s', (raw, expected) => {
    expect(parseBoolean(raw)).toBe(expected);
  });

  it.each(['yes', 'no', 't', 'f', '2', '01', '', ' ', 'truee'])('gives null for %j', (raw) => {
    expect(parseBoolean(raw)).toBeNull();
  });
});

describe('parseTimestamp', () => {
  it.each([
    ['2024-05-01T10:00:00Z', '2024-05-01T10:00:00Z', 'Z stays'],
    ['2024-05-01 10:00:00', '2024-05-01T10:00:00Z', 'no offset means UTC, space separator'],
    ['2024-05-01T10:00:00.123456789Z', '2024-05-01T10:00:00.123456789Z', 'fraction digits kept as given'],
    ['2024-05-01T10:00:00.10', '2024-05-01T10:00:00.10Z', 'trailing zero of a fraction kept'],
    ['2024-05-01T10:00:00+02:00', '2024-05-01T08:00:00Z', 'positive offset subtracted'],
    ['2024-05-01T10:00:00-05:30', '2024-05-01T15:30:00Z', 'negative offset added'],
    ['2024-05-01T00:30:00+01:00', '2024-04-30T23:30:00Z', 'crosses midnight backwards into the previous month'],
    ['2024-01-01T00:15:00.5+00:30', '2023-12-31T23:45:00.5Z', 'crosses the year backwards'],
    ['2023-12-31T23:00:00-01:00', '2024-01-01T00:00:00Z', 'crosses the year forwards'],
    ['2024-02-28T23:30:00-00:45', '2024-02-29T00:15:00Z', 'lands on a leap day'],
    ['2023-02-28T23:30:00-00:45', '2023-03-01T00:15:00Z', 'skips Feb 29 in a common year'],
    ['2024-03-01T00:10:00+00:20', '2024-02-29T23:50:00Z', 'back into a leap day'],
    ['2000-02-29T12:00:00Z', '2000-02-29T12:00:00Z', 'leap day in a 400-year'],
    ['2024-04-30T22:00:00-02:00', '2024-05-01T00:00:00Z', 'forward into a new month from a 30-day month'],
    ['2024-05-01T10:00:00+00:00', '2024-05-01T10:00:00Z', 'zero offset'],
    ['  2024-05-01T10:00:00Z  ', '2024-05-01T10:00:00Z', 'surrounding whitespace ignored'],
  ])('reads %j as %j (%s)', (raw, expected) => {
    expect(parseTimestamp(raw)).toBe(expected);
  });

  it.each([
    ['2023-02-29T10:00:00Z', 'Feb 29 in a common year'],
    ['1900-02-29T10:00:00Z', 'Feb 29 in a century that is not a leap year'],
    ['2024-04-31T10:00:00Z', 'day 31 of a 30-day month'],
    ['2024-13-01T10:00:00Z', 'month 13'],
    ['2024-00-10T10:00:00Z', 'month 0'],
    ['2024-05-00T10:00:00Z', 'day 0'],
    ['2024-05-01T24:00:00Z', 'hour 24'],
    ['2024-05-01T10:60:00Z', 'minute 60'],
    ['2024-05-01T10:00:60Z', 'second 60'],
    ['2024-05-01T10:00:00+24:00', 'offset hour 24'],
    ['2024-05-01T10:00:00+01:60', 'offset minute 60'],
    ['2024-05-01T10:00:00+0100', 'offset without colon'],
    ['2024-05-01T10:00', 'no seconds'],
    ['2024-05-01', 'date only'],
    ['2024-5-1T10:00:00Z', 'unpadded parts'],
    ['2024-05-01T10:00:00.Z', 'a dot with no fraction digits'],
    ['2024-05-01X10:00:00Z', 'a wrong separator'],
    ['2024-05-01T10:00:00 Z', 'a space before Z'],
    ['9999-12-31T23:30:00-01:00', 'a UTC result after year 9999'],
    ['yesterday', 'text'],
    ['', 'empty'],
  ])('gives null for %j (%s)', (raw) => {
    expect(parseTimestamp(raw)).toBeNull();
  });
});

describe('text fields', () => {
  it('keeps BODY byte for byte, whitespace, quotes and newlines included', () => {
    const body = '  <p class="x">a, "b"\r\nc</p>\t';
    expect(parseBody(body)).toBe(body);
    expect(parseBody(' ')).toBe(' ');
  });

  it('reads an empty BODY as null', () => {
    expect(parseBody('')).toBeNull();
    expect(parseBody(undefined)).toBeNull();
  });

  it('trims NAME and reads a blank one as null', () => {
    expect(parseName('  Ann Lee \t')).toBe('Ann Lee');
    expect(parseName('   ')).toBeNull();
  });

  it.each([
    [' ann@example.com ', 'ann@example.com'],
    ['Ann@Example.COM', 'Ann@Example.COM'],
    ['jdoe@intranet', 'jdoe@intranet'],
  ])('trims and accepts the email %j', (raw, expected) => {
    expect(parseEmail(raw)).toBe(expected);
  });

  it.each(['annexample.com', '@example.com', 'ann@', 'a@b@c', '@', '', '  ', ' ann@ '])('rejects the email %j', (raw) => {
    expect(parseEmail(raw)).toBeNull();
  });

  it('treats whitespace-only cells as blank and text as not blank', () => {
    expect(isBlank(' \t')).toBe(true);
    expect(isBlank(undefined)).toBe(true);
    expect(isBlank(' x ')).toBe(false);
  });
});
