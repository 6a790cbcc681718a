import { Linter } from 'eslint';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importDirection, LAYERS, STAGES } from '../../../lint/import-direction.ts';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const linter = new Linter({ configType: 'flat' });
const config = [
  {
    files: ['**/*.ts'],
    plugins: { local: { rules: { 'import-direction': importDirection } } },
    rules: { 'local/import-direction': 'error' as const },
  },
];

/** The rule's messages for `source` as the file `path` (relative to the repository). */
const problems = (path: string, source: string) => linter.verify(source, config, `${root}${path}`).map((problem) => problem.message);

describe('the import-direction rule', () => {
  it('lets a folder import its own folder and the folders below it', () => {
    expect(
      problems('lib/devices/a.ts', "import { b } from './b.ts';\nimport { c } from '../cache/tiered-cache.ts';\nexport { b, c };"),
    ).toEqual([]);
    expect(problems('functions/devices.ts', "import { d } from '../lib/devices/device-list-route.ts';\nexport { d };")).toEqual([]);
    expect(problems('lib/config.ts', "import { e } from './errors.ts';\nexport { e };")).toEqual([]);
  });

  it('refuses an import up the layers, naming both folders', () => {
    expect(problems('lib/cache/a.ts', "import { d } from '../devices/device-list.ts';\nexport { d };")).toEqual([
      expect.stringContaining('cache must not import devices'),
    ]);
    expect(problems('lib/errors.ts', "const m = await import('./config.ts');\nexport { m };")).toEqual([
      expect.stringContaining('errors.ts must not import config.ts'),
    ]);
  });

  it('lets the stages of lib/import share only formats, and job compose them all', () => {
    expect(
      problems(
        'lib/import/take/a.ts',
        "import { k } from '../formats/row-keys.ts';\nimport { s } from './spill-writer.ts';\nexport { k, s };",
      ),
    ).toEqual([]);
    expect(problems('lib/import/write/a.ts', "import { r } from '../formats/spill-record.ts';\nexport { r };")).toEqual([]);
    expect(
      problems(
        'lib/import/job/a.ts',
        "import { r } from '../read/read-side.ts';\nimport { t } from '../take/take-side.ts';\nimport { w } from '../write/tar-writer.ts';\nimport { f } from '../formats/assets.ts';\nexport { r, t, w, f };",
      ),
    ).toEqual([]);
  });

  it('refuses a stage importing a sibling stage, the composer, or formats importing a stage', () => {
    expect(problems('lib/import/take/a.ts', "import { r } from '../read/row-verdicts.ts';\nexport { r };")).toEqual([
      expect.stringContaining('import/take must not import import/read'),
    ]);
    expect(problems('lib/import/read/a.ts', "import { w } from '../write/tar-writer.ts';\nexport { w };")).toEqual([
      expect.stringContaining('import/read must not import import/write'),
    ]);
    expect(problems('lib/import/write/a.ts', "import { t } from '../take/take-side.ts';\nexport { t };")).toEqual([
      expect.stringContaining('import/write must not import import/take'),
    ]);
    expect(problems('lib/import/read/a.ts', "import { j } from '../job/run-plan.ts';\nexport { j };")).toEqual([
      expect.stringContaining('import/read must not import import/job'),
    ]);
    expect(problems('lib/import/formats/a.ts', "import { r } from '../read/chat-columns.ts';\nexport { r };")).toEqual([
      expect.stringContaining('import/formats must not import import/read'),
    ]);
  });

  it('refuses a folder of lib/import that STAGES does not place', () => {
    expect(problems('lib/import/misc/a.ts', "import { f } from '../formats/assets.ts';\nexport { f };")).toEqual([
      expect.stringContaining('import/misc: not a stage'),
    ]);
  });

  it('refuses production code reaching into test/, and a folder the layers do not place', () => {
    expect(problems('scripts/start.ts', "import { f } from '../test/support/free-port.ts';\nexport { f };")).toEqual([
      expect.stringContaining('nothing on the production side imports test/'),
    ]);
    expect(problems('lib/newfolder/a.ts', "import { v } from '../values/int64.ts';\nexport { v };")).toEqual([
      expect.stringContaining('not in lint/import-direction.ts'),
    ]);
  });

  it('names each layer once, and each stage once', () => {
    expect(new Set(LAYERS).size).toBe(LAYERS.length);
    for (const { composer, formats, stages } of Object.values(STAGES)) {
      const all = [composer, formats, ...stages];
      expect(new Set(all).size).toBe(all.length);
    }
  });
});
