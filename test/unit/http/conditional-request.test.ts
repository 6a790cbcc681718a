import { describe, expect, it } from 'vitest';
import { notModifiedEtag } from '../../../lib/http/response-encoder.ts';

describe('notModifiedEtag', () => {
  it.each([
    ['"abc"', '"abc"'],
    ['W/"abc"', '"abc"'],
    ['"x", "abc"', '"abc"'],
    ['*', '"abc"'],
    ['"abc-gzip"', '"abc-gzip"'],
    ['W/"abc-gzip", "y"', '"abc-gzip"'],
  ])('answers If-None-Match %s with 304 under %s', (header, tag) => {
    expect(notModifiedEtag(header, '"abc"')).toBe(tag);
  });

  it.each([undefined, '', '"abcd"', '"ab"', '"abc-br"', 'abc'])('answers If-None-Match %j with a 200', (header) => {
    expect(notModifiedEtag(header, '"abc"')).toBeUndefined();
  });
});
