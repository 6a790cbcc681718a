import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { ucs2length } from '../../../lib/validators/ucs2length.ts';
import { VALIDATOR_MODULES, validatorSource } from '../../../scripts/validators.ts';

const ROOT = new URL('../../../', import.meta.url);

describe('generated request-body validators (lib/validators/)', () => {
  it.each(VALIDATOR_MODULES.map((module) => [module.file, module] as const))(
    '%s is what its schema generates today (run npm run generate:validators if not)',
    async (file, module) => {
      expect(await readFile(new URL(file, ROOT), 'utf8')).toBe(validatorSource(module));
    },
  );

  it('import no part of AJV at run time', async () => {
    for (const { file } of VALIDATOR_MODULES) {
      const source = await readFile(new URL(file, ROOT), 'utf8');
      expect(source.match(/^import (?!type ).*$/gm)?.join('\n')).not.toMatch(/'ajv/);
      expect(source).not.toContain('require(');
    }
  });
});

describe('ucs2length', () => {
  it.each([
    ['', 0],
    ['abc', 3],
    ['é', 1],
    ['🎉', 1],
    ['a🎉b🎉', 4],
    ['\ud83c', 1],
    ['\udf89x', 2],
  ])('counts %j as %i code points', (text, expected) => {
    expect(ucs2length(text)).toBe(expected);
  });
});
