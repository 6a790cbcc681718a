import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIGURATION_VARIABLES } from '../../../scripts/local/offline-command.ts';

const read = (path: string): string => readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8');

/** The variables named in the first column of docs/configuration.md's table. */
const documented = (): string[] => {
  const table = read('docs/configuration.md').split('## Variables')[1]!.split('\n## ')[0]!;
  const names = table
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .flatMap((line) => [...line.split('|')[1]!.matchAll(/`([A-Z0-9_]+)`/g)].map((match) => match[1]!));
  return [...new Set(names)].sort();
};

describe('docs/configuration.md', () => {
  it('documents exactly the variables the local stack shows in its banner and the tests clear', () => {
    expect(documented()).toEqual([...CONFIGURATION_VARIABLES].sort());
  });

  it('documents every variable lib/config.ts reads', () => {
    const source = read('lib/config.ts');
    const names = [...source.matchAll(/\(env, '([A-Z0-9_]+)'/g)].map((match) => match[1]!);
    expect(names.length).toBeGreaterThan(10);
    expect(names.filter((name) => !documented().includes(name))).toEqual([]);
  });
});
