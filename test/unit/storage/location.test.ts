import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatLocation, LocationError, parseLocation } from '../../../lib/storage/location.ts';

describe('parseLocation', () => {
  it('reads s3://bucket/key with a key holding slashes', () => {
    expect(parseLocation('s3://import-local/input/2026/chat.csv')).toEqual({
      kind: 's3',
      bucket: 'import-local',
      key: 'input/2026/chat.csv',
    });
  });

  it('accepts the scheme in upper case', () => {
    expect(parseLocation('S3://my.bucket-1/a.tar')).toEqual({ kind: 's3', bucket: 'my.bucket-1', key: 'a.tar' });
  });

  it('takes a key or path as written, spaces and all, inside it', () => {
    expect(parseLocation('s3://bucket-a/chat export 2026.csv')).toEqual({ kind: 's3', bucket: 'bucket-a', key: 'chat export 2026.csv' });
    expect(parseLocation('/data/chat export.csv')).toEqual({ kind: 'file', path: '/data/chat export.csv' });
  });

  it('takes an object key of 1,024 bytes, the most S3 allows, and refuses one byte more, quoting the location shortened', () => {
    const key = 'é'.repeat(512);
    expect(parseLocation(`s3://bucket-a/${key}`)).toEqual({ kind: 's3', bucket: 'bucket-a', key });
    const refused = () => parseLocation(`s3://bucket-a/${key}x`);
    expect(refused).toThrow(LocationError);
    expect(refused).toThrow(/^"s3:\/\/bucket-a\/é{66}…é{29}x" has an object key of 1025 bytes; S3 allows at most 1024$/);
  });

  it('resolves a relative path against the working directory', () => {
    expect(parseLocation('out/tickets.tar')).toEqual({ kind: 'file', path: resolve('out/tickets.tar') });
  });

  it('keeps an absolute path and reads a file: URL', () => {
    expect(parseLocation('/data/chat.csv')).toEqual({ kind: 'file', path: '/data/chat.csv' });
    expect(parseLocation('file:///data/chat%20export.csv')).toEqual({ kind: 'file', path: '/data/chat export.csv' });
  });

  it.each([
    ['an empty string', '', /is empty/],
    ['blanks only', '   ', /is empty/],
    [
      'an S3 URL with a trailing space (the key "k " may exist beside "k")',
      's3://bucket/k ',
      /^"s3:\/\/bucket\/k " starts or ends with white space, which a location may not have \(trimmed, it would name another object or file\)$/,
    ],
    [
      'a long location with a trailing space, which its quote keeps',
      `s3://bucket/${'😀'.repeat(200)} `,
      /^"s3:\/\/bucket\/(?:😀){68}…(?:😀){29} " starts or ends with white space/u,
    ],
    ['a path with a leading space', ' in.csv', /starts or ends with white space/],
    ['a location ending in a newline', 's3://bucket/k\n', /^"s3:\/\/bucket\/k\\n" starts or ends with white space/],
    ['a bucket without a key', 's3://bucket', /has no object key/],
    ['a bucket with an empty key', 's3://bucket/', /has no object key/],
    ['a key naming a folder', 's3://bucket/output/', /names a folder/],
    ['an upper-case bucket', 's3://Bucket/key', /valid S3 bucket/],
    ['a two-letter bucket', 's3://ab/key', /valid S3 bucket/],
    ['a bucket with consecutive dots', 's3://a..b/key', /valid S3 bucket/],
    ['a missing slash after the scheme', 's3:/bucket/key', /not an S3 URL/],
    ['an http URL', 'https://bucket.s3.amazonaws.com/key', /unsupported scheme/],
    ['a directory path', 'out/', /names a directory/],
  ])('refuses %s with a clear LocationError', (_label, input, message) => {
    expect(() => parseLocation(input)).toThrow(LocationError);
    expect(() => parseLocation(input)).toThrow(message);
  });
});

describe('formatLocation', () => {
  it('formats both kinds back to their text', () => {
    expect(formatLocation(parseLocation('s3://bucket-a/k/x.csv'))).toBe('s3://bucket-a/k/x.csv');
    expect(formatLocation(parseLocation('/tmp/x.tar'))).toBe('/tmp/x.tar');
  });

  it('gives a relative and an absolute spelling of one file the same text', () => {
    expect(formatLocation(parseLocation('x.tar'))).toBe(formatLocation(parseLocation(resolve('x.tar'))));
    expect(formatLocation(parseLocation('s3://bucket-a/x'))).not.toBe(formatLocation(parseLocation('s3://bucket-b/x')));
  });
});
