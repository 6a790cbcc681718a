import { describe, expect, it } from 'vitest';
import { requireJsonAccepted } from '../../../lib/users/accepts-json.ts';
import { NotAcceptableError } from '../../../lib/users/user-errors.ts';

/** Whether the chain would let a request with this `Accept` header through (no NotAcceptableError). */
const acceptsJson = (header: string | undefined): boolean => {
  try {
    requireJsonAccepted(header === undefined ? {} : { accept: header });
    return true;
  } catch (error) {
    if (error instanceof NotAcceptableError) return false;
    throw error;
  }
};

describe('Accept header admitting JSON', () => {
  it.each([
    ['no header', undefined],
    ['an empty header', ''],
    ['application/json', 'application/json'],
    ['application/json with a charset', 'application/json; charset=utf-8'],
    ['application/*', 'application/*'],
    ['*/*', '*/*'],
    ['a browser-style list', 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'],
    ['mixed case', 'Application/JSON'],
    ['JSON with a low but positive weight', 'text/html, application/json;q=0.1'],
  ])('admits JSON for %s', (_label, header) => {
    expect(acceptsJson(header)).toBe(true);
  });

  it.each([
    ['text/html only', 'text/html'],
    ['application/xml only', 'application/xml'],
    ['JSON refused with q=0', 'application/json;q=0'],
    ['everything but JSON', '*/*, application/json;q=0'],
    ['application/* refused', 'text/plain, application/*;q=0'],
    ['garbage', 'nonsense'],
  ])('refuses JSON for %s', (_label, header) => {
    expect(acceptsJson(header)).toBe(false);
  });

  it('finds the Accept header whatever its case and answers 406 when it excludes JSON', () => {
    expect(() => requireJsonAccepted({ Accept: 'text/html' })).toThrow(NotAcceptableError);
    expect(() => requireJsonAccepted({ accept: 'text/html' })).toThrow(expect.objectContaining({ status: 406 }));
    expect(() => requireJsonAccepted({ accept: 'application/json' })).not.toThrow();
    expect(() => requireJsonAccepted({})).not.toThrow();
  });
});
