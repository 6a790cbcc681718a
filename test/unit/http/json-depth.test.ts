import { describe, expect, it } from 'vitest';
import { exceedsJsonDepth } from '../../../lib/http/json-depth.ts';

describe('exceedsJsonDepth', () => {
  it('counts nested arrays and objects', () => {
    expect(exceedsJsonDepth('{"a":[{"b":[]}]}', 4)).toBe(false);
    expect(exceedsJsonDepth('{"a":[{"b":[]}]}', 3)).toBe(true);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    expect(exceedsJsonDepth('{"a":"[[[[{{{{\\"[[[["}', 1)).toBe(false);
  });

  it('handles flat bodies and unbalanced text without throwing', () => {
    expect(exceedsJsonDepth('"plain"', 1)).toBe(false);
    expect(exceedsJsonDepth(']]]]', 1)).toBe(false);
    expect(exceedsJsonDepth('['.repeat(100), 64)).toBe(true);
  });
});
