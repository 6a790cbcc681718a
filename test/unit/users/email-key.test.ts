import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { emailKey } from '../../../lib/users/email-key.ts';

describe('emailKey', () => {
  it('lower-cases an ASCII address', () => {
    expect(emailKey('Jane.Doe@Example.COM')).toBe('jane.doe@example.com');
  });

  it.each([
    ['ΣΑΣ@x.gr', 'σασ@x.gr'],
    ['σας@x.gr', 'ΣΑΣ@X.GR'],
    ['STRASSE@x.de', 'straße@x.de'],
    ['İstanbul@x.tr', 'i̇stanbul@x.tr'],
    ['ẞ@x.de', 'ss@x.de'],
  ])('gives %s and %s, which differ only in case, one key', (one, other) => {
    expect(emailKey(one)).toBe(emailKey(other));
  });

  it('keeps addresses apart that differ in more than case', () => {
    expect(emailKey('σας@x.gr')).not.toBe(emailKey('σαα@x.gr'));
    expect(emailKey('strasse@x.de')).not.toBe(emailKey('strase@x.de'));
  });

  it('gives an address and its upper- and lower-cased forms one key, and is its own key', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 20 }), (address) => {
        const key = emailKey(address);
        expect(emailKey(address.toUpperCase())).toBe(key);
        expect(emailKey(address.toLowerCase())).toBe(key);
        expect(emailKey(key)).toBe(key);
      }),
      { numRuns: 2000 },
    );
  });
});
