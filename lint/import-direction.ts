import type { Rule } from 'eslint';
import type { Node } from 'estree';
import { dirname, relative, resolve } from 'node:path';

/**
 * The folders of `lib/` from the top of the house to its ground (docs/architecture.md#the-folders-of-lib):
 * a module imports from its own folder or from a folder further down this list, never up it, so no
 * folder imports one that imports it back. `functions/` stands above them all.
 */
export const LAYERS = [
  'functions',
  'devices',
  'import',
  'credentials',
  'ticketing',
  'users',
  'http',
  'storage',
  'cache',
  'inventory',
  'config.ts',
  'env-values.ts',
  'latest-os',
  'upstream',
  'runtime',
  'async',
  'bytes',
  'validators',
  'values',
  'errors.ts',
];

/**
 * Folders cut into stages (docs/architecture.md#the-import): a stage imports its own folder and the
 * shared formats, never a sibling stage; the composer imports them all; the formats import no stage.
 */
export interface Stages {
  /** The folder that composes the stages (and may import any of them). */
  composer: string;
  /** The folder of the formats that cross stages, which every stage may import. */
  formats: string;
  stages: string[];
}

export const STAGES: Record<string, Stages> = { import: { composer: 'job', formats: 'formats', stages: ['read', 'take', 'write'] } };

/** May a module of stage `from` import one of stage `to` (both subfolders of a folder with `stages`)? */
const stageMayImport = (stages: Stages, from: string, to: string): boolean =>
  from === to || from === stages.composer || to === stages.formats;

const root = resolve(import.meta.dirname, '..');

/** `functions`, a folder of lib/ (`devices`), or a file at lib's root (`config.ts`); undefined elsewhere. */
const layerOf = (file: string): string | undefined => {
  const path = relative(root, file).split('\\').join('/');
  if (path.startsWith('functions/')) return 'functions';
  const match = /^lib\/([^/]+)/.exec(path);
  return match?.[1];
};

/** The subfolder (or file) of a folder with STAGES (`read` of lib/import/read/…); undefined elsewhere. */
const stageOf = (file: string, layer: string): string | undefined => {
  const path = relative(root, file).split('\\').join('/');
  return STAGES[layer] === undefined ? undefined : path.split('/')[2];
};

/** The production side: what ships or runs the local stack must not reach into the tests. */
const PRODUCTION = /^(lib|functions|scripts|demo)\//;

export const importDirection: Rule.RuleModule = {
  meta: {
    type: 'problem',
    docs: { description: 'Imports run one way: functions → use cases → adapters → shared ground (docs/architecture.md).' },
    schema: [],
  },
  create: (context) => {
    const file = context.filename;
    const from = layerOf(file);
    const check = (node: Node, source: unknown): void => {
      if (typeof source !== 'string' || !source.startsWith('.')) return;
      const target = resolve(dirname(file), source);
      const targetPath = relative(root, target).split('\\').join('/');
      if (PRODUCTION.test(relative(root, file).split('\\').join('/')) && targetPath.startsWith('test/')) {
        context.report({ node, message: `${source}: nothing on the production side imports test/.` });
        return;
      }
      const to = layerOf(target);
      if (from === undefined || to === undefined) return;
      if (from === to) {
        const stages = STAGES[from];
        const [fromStage, toStage] = [stageOf(file, from), stageOf(target, to)];
        if (stages === undefined || fromStage === undefined || toStage === undefined) return;
        const known = [stages.composer, stages.formats, ...stages.stages];
        const unplaced = [fromStage, toStage].find((stage) => !known.includes(stage));
        if (unplaced !== undefined) {
          context.report({ node, message: `${from}/${unplaced}: not a stage in lint/import-direction.ts' STAGES; place it there.` });
        } else if (!stageMayImport(stages, fromStage, toStage)) {
          context.report({
            node,
            message: `${from}/${fromStage} must not import ${from}/${toStage}: stages share only ${from}/${stages.formats}, and ${from}/${stages.composer} composes them.`,
          });
        }
        return;
      }
      const [fromRank, toRank] = [LAYERS.indexOf(from), LAYERS.indexOf(to)];
      if (fromRank === -1 || toRank === -1) {
        context.report({
          node,
          message: `${from === undefined || fromRank === -1 ? from : to}: not in lint/import-direction.ts' LAYERS; place it there.`,
        });
      } else if (toRank < fromRank) {
        context.report({
          node,
          message: `${from} must not import ${to}: imports run down the layers (${LAYERS.join(' → ')}).`,
        });
      }
    };
    return {
      ImportDeclaration: (node) => check(node, node.source.value),
      ExportAllDeclaration: (node) => check(node, node.source.value),
      ExportNamedDeclaration: (node) => {
        if (node.source) check(node, node.source.value);
      },
      ImportExpression: (node) => {
        if (node.source.type === 'Literal') check(node, node.source.value);
      },
    };
  },
};
