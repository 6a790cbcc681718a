import type { BuildOptions, Plugin } from 'esbuild';
import { builtinModules } from 'node:module';
import { basename, extname, relative, sep } from 'node:path';

const BUILTINS = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]));
const REQUIRED_BUILTIN = 'required-builtin';

/**
 * Routes every Node built-in import through a lazy stand-in, loaded with require() on the first use
 * of one of its exports. An ESM import of a built-in makes Node build its ESM facade, which reads
 * every export up front (`node:http` alone then loads undici), and even a require() at a module's top
 * costs its load at init: `node:http` (for @middy/util's STATUS_CODES), `node:crypto` and `node:zlib`
 * were a third of the devices function's import time (docs/architecture.md#cold-start). The stand-in
 * has no own properties: esbuild's ESM interop then copies nothing per importing module, and every
 * name is read through its prototype from the real module, required the first time.
 */
const lazyBuiltin = (name: string): string =>
  [
    'let real;',
    `const load = () => (real ??= require(${JSON.stringify(name)}));`,
    'const throughReal = { get: (_, key) => (key === "__esModule" ? undefined : load()[key]), has: (_, key) => key in load() };',
    'module.exports = Object.create(new Proxy({}, throughReal));',
  ].join('\n');

const lazyBuiltins: Plugin = {
  name: 'lazy-builtins',
  setup: (build) => {
    build.onResolve({ filter: /^(node:)?[a-z_]+(\/[a-z_]+)?$/ }, (args) => {
      if (!BUILTINS.has(args.path)) return undefined;
      const name = args.path.startsWith('node:') ? args.path : `node:${args.path}`;
      // The stand-in module's own require() is the real, external built-in.
      if (args.namespace === REQUIRED_BUILTIN) return { path: name, external: true };
      // One stand-in per importing module: it lands in that module's chunk, where one shared by code
      // in several chunks would be a file of its own, one more for Node to resolve and link at init.
      const importer = relative(build.initialOptions.absWorkingDir ?? process.cwd(), args.importer)
        .split(sep)
        .join('/');
      return { path: `${name}?${importer}`, namespace: REQUIRED_BUILTIN };
    });
    build.onLoad({ filter: /.*/, namespace: REQUIRED_BUILTIN }, (args) => ({
      contents: lazyBuiltin(args.path.slice(0, args.path.indexOf('?'))),
      loader: 'js',
    }));
  },
};

/** Where an entry's chunks go: `chunks/<entry>/`, beside the entry's bundle. */
const chunkFolderOf = (entry: string): string => `chunks/${basename(entry, extname(entry))}`;

/**
 * Puts each function's chunks in a folder of its own (`functions/chunks/devices/…`). serverless-esbuild
 * builds every function into the same folder, and its zips take every file there but the other
 * functions' bundles: with one folder per function, serverless.yml's per-function `package.patterns`
 * keep each zip to its own chunks.
 */
const chunksPerEntry: Plugin = {
  name: 'chunks-per-entry',
  setup: (build) => {
    const entries = build.initialOptions.entryPoints;
    const first = Array.isArray(entries) ? entries[0] : undefined;
    const entry = typeof first === 'string' ? first : first?.in;
    if (entry === undefined) throw new Error('chunks-per-entry: expected one entry point per build');
    build.initialOptions.chunkNames = `${chunkFolderOf(entry)}/[name]-[hash]`;
  },
};

/**
 * The esbuild options of every function bundle: the ONE source read by `osls package`/`deploy` and
 * `npm start` (through `esbuild.config.cjs`), by `npm run build` and by the cold-start bench, so what
 * is measured and tested is what ships. Nothing is external: the bundle pins the exact SDK and library
 * versions the tests ran against instead of the runtime's built-in AWS SDK, and every bundle stays well
 * under 1 MB (see `npm run build`).
 *
 * This module is loaded with require() by serverless-esbuild, so it must stay synchronous and light.
 */
export const bundleOptions = (): BuildOptions => ({
  bundle: true,
  minify: true,
  // Error classes name themselves after their class (AppError: `new.target.name`); log lines and
  // thrown errors must read `ConfigError`, not a minified `fc`.
  keepNames: true,
  // A linked map keeps the code file small; NODE_OPTIONS=--enable-source-maps turns stack traces back into TypeScript.
  sourcemap: 'linked',
  sourcesContent: false,
  target: 'node24',
  platform: 'node',
  format: 'esm',
  // What a function imports dynamically (the SSM client, ioredis, the SDK's own credential
  // providers) becomes a chunk loaded on first use, not code parsed at every cold start
  // (bench/cold-start.bench.ts, docs/architecture.md#cold-start).
  splitting: true,
  // CommonJS dependencies inside an ESM bundle still call require() for Node built-ins.
  banner: {
    js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
  },
  mainFields: ['module', 'main'],
  external: [],
  // Dependencies' license notices stay with the code they cover.
  legalComments: 'eof',
  plugins: [lazyBuiltins, chunksPerEntry],
  outExtension: { '.js': '.mjs' },
});

/** Lambda loads `functions/<file>.mjs` for the handler `functions/<file>.handler`. */
export const BUNDLE_EXTENSION = '.mjs';

/** What serverless-esbuild takes: the same esbuild options plus the plugin's own keys. */
export const serverlessEsbuildConfig = (): Record<string, unknown> => {
  const { outExtension: _outExtension, ...options } = bundleOptions();
  return {
    ...options,
    outputFileExtension: BUNDLE_EXTENSION,
    // Nothing external means nothing for the plugin to install next to the bundle.
    exclude: [],
    packager: 'npm',
  };
};
