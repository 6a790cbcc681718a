import { describe, expect, it } from 'vitest';
import { emailKey } from '../../../../lib/users/email-key.ts';
import { destinationUserId } from '../../../../lib/import/read/asset-rules.ts';
import { UserResolver } from '../../../../lib/import/take/resolve-users.ts';

describe('destinationUserId', () => {
  it('finds the destination id of an email by its key, whatever its case, canonically written', () => {
    const users = new Map([['ann@x.io', '0009223372036854775807']]);
    expect(destinationUserId(users, emailKey('ANN@x.io'))).toBe('9223372036854775807');
    expect(destinationUserId(users, 'bob@x.io')).toBeNull();
    expect(destinationUserId(undefined, 'ann@x.io')).toBeNull();
  });

  it('refuses a destination id that is not a 64-bit integer rather than write broken JSON', () => {
    expect(() => destinationUserId(new Map([['ann@x.io', '12,"x":1']]), 'ann@x.io')).toThrowError(TypeError);
  });
});

describe('UserResolver', () => {
  it('remaps nothing when no winning user came from the destination', () => {
    const resolver = new UserResolver(false);
    expect(resolver.enabled).toBe(false);
    resolver.take('5', null);
    expect(resolver.remapsAny).toBe(false);
    expect(resolver.remap('5')).toBe('5');
    expect(resolver.matched).toBe(0);
  });

  it('remaps the author of a user whose id came from the destination', () => {
    const resolver = new UserResolver(true);
    resolver.take('5', '9223372036854775807');
    expect(resolver.remap('5')).toBe('9223372036854775807');
    expect(resolver.remap('6')).toBe('6');
    expect(resolver.matched).toBe(1);
  });

  it('lets the first user of an author decide: a later matched user of the same author remaps nothing', () => {
    const resolver = new UserResolver(true);
    resolver.take('5', null);
    resolver.take('5', '900');
    expect(resolver.remap('5')).toBe('5');
    expect(resolver.matched).toBe(1);
  });

  it('keeps the first matched mapping of an author when a later user maps elsewhere', () => {
    const resolver = new UserResolver(true);
    resolver.take('5', '800');
    resolver.take('5', '900');
    expect(resolver.remap('5')).toBe('800');
    expect(resolver.matched).toBe(2);
  });

  it('tells apart AUTHOR_IDs that share their low 32 bits or differ only in sign, up to the 64-bit limits', () => {
    const resolver = new UserResolver(true);
    resolver.take('5', null);
    resolver.take('4294967301', '900'); // 2^32 + 5
    resolver.take('6', '500');
    resolver.take('-5', '800');
    resolver.take('-9223372036854775808', '700');
    resolver.take('9223372036854775807', null);
    const ids = ['4294967301', '5', '6', '-5', '-9223372036854775808', '9223372036854775807', '7'];
    expect(ids.map((id) => resolver.remap(id))).toEqual(['900', '5', '500', '800', '700', '9223372036854775807', '7']);
    resolver.take('5', '600');
    expect(resolver.remap('5')).toBe('5');
  });

  it('counts a matched user without AUTHOR_ID but remaps nothing through it', () => {
    const resolver = new UserResolver(true);
    resolver.take(null, '900');
    expect(resolver.matched).toBe(1);
    expect(resolver.remapsAny).toBe(false);
  });
});
