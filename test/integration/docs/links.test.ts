import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const tracked = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
  .split('\n')
  .filter((file) => file !== '' && existsSync(join(ROOT, file)));
const markdown = tracked.filter((file) => file === 'README.md' || (file.startsWith('docs/') && file.endsWith('.md')));

/** GitHub's anchor for a heading: lower case, punctuation dropped (hyphens and underscores stay), spaces as hyphens. */
const anchorOf = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\- _]/gu, '')
    .replace(/ /g, '-');

const anchorsIn = (file: string): Set<string> => {
  const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((match) => anchorOf(match[1]!)));
};

/** Every `[text](target)` outside fenced code, with where it points. */
const linksIn = (file: string): string[] => {
  const text = readFileSync(join(ROOT, file), 'utf8').replace(/```[\s\S]*?```/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!);
};

describe('the documentation', () => {
  it('has a README and the docs/ pages', () => {
    expect(markdown).toEqual(
      expect.arrayContaining([
        'README.md',
        'docs/api.md',
        'docs/import.md',
        'docs/configuration.md',
        'docs/operations.md',
        'docs/architecture.md',
      ]),
    );
  });

  it.each(markdown)('%s: every relative link resolves to a file (and heading) of the repository', (file) => {
    const broken: string[] = [];
    for (const link of linksIn(file)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // https:, mailto:: not a file of the repository
      const [path = '', fragment] = link.split('#');
      const target = path === '' ? join(ROOT, file) : resolve(dirname(join(ROOT, file)), path);
      if (relative(ROOT, target).startsWith('..') || !existsSync(target)) broken.push(`${link} (no such file in the repository)`);
      else if (fragment !== undefined && statSync(target).isFile() && target.endsWith('.md') && !anchorsIn(target).has(fragment)) {
        broken.push(`${link} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('nothing in the repository points at documents outside it', () => {
    const outside = [`..${'/'}shared`, `CONTRACT${'.'}md`, `CONTRACT ${'§'}`];
    const offenders = tracked.filter((file) => {
      if (file === 'package-lock.json' || /\.(png|jpg|gz|tar|zip)$/.test(file)) return false;
      const text = readFileSync(join(ROOT, file), 'utf8');
      return outside.some((needle) => text.includes(needle));
    });
    expect(offenders).toEqual([]);
  });
});
