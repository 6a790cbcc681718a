import { describe, expect, it } from 'vitest';
import { UserResolver } from '../../../lib/import/resolve-users.ts';

const user = (author_id: string, email: string, name = 'N') => ({ author_id, email, name });

describe('UserResolver', () => {
  it('keeps AUTHOR_ID as the id and remaps nothing when resolution is disabled', () => {
    const resolver = new UserResolver(undefined);
    expect(resolver.enabled).toBe(false);
    expect(resolver.resolve(user('5', 'a@x.io'))).toEqual({ id: '5', name: 'N', email: 'a@x.io' });
    expect(resolver.remap('5')).toBe('5');
    expect(resolver.matched).toBe(0);
  });

  it('takes the destination id for an email held there, whatever its case, and remaps that author', () => {
    const resolver = new UserResolver(new Map([['ann@x.io', '9223372036854775807']]));
    expect(resolver.resolve(user('5', 'ANN@x.io')).id).toBe('9223372036854775807');
    expect(resolver.remap('5')).toBe('9223372036854775807');
    expect(resolver.remap('6')).toBe('6');
    expect(resolver.matched).toBe(1);
  });

  it('lets the first user of an author decide: a later matched email of the same author remaps nothing', () => {
    const resolver = new UserResolver(new Map([['second@x.io', '900']]));
    expect(resolver.resolve(user('5', 'first@x.io')).id).toBe('5');
    expect(resolver.resolve(user('5', 'second@x.io')).id).toBe('900');
    expect(resolver.remap('5')).toBe('5');
    expect(resolver.matched).toBe(1);
  });

  it('keeps the first matched mapping of an author when a later email maps elsewhere', () => {
    const resolver = new UserResolver(new Map([['first@x.io', '800'], ['second@x.io', '900']]));
    resolver.resolve(user('5', 'first@x.io'));
    resolver.resolve(user('5', 'second@x.io'));
    expect(resolver.remap('5')).toBe('800');
    expect(resolver.matched).toBe(2);
  });

  it('refuses a destination id that is not a 64-bit integer rather than write broken JSON', () => {
    const resolver = new UserResolver(new Map([['ann@x.io', '12,"x":1']]));
    expect(() => resolver.resolve(user('5', 'ann@x.io'))).toThrowError(TypeError);
  });
});
