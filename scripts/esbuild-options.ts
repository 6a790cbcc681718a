import type { BuildOptions } from 'esbuild';

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
  // A linked map keeps the code file small; NODE_OPTIONS=--enable-source-maps turns stack traces back into TypeScript.
  sourcemap: 'linked',
  sourcesContent: false,
  target: 'node24',
  platform: 'node',
  format: 'esm',
  // CommonJS dependencies inside an ESM bundle still call require() for Node built-ins.
  banner: {
    js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
  },
  mainFields: ['module', 'main'],
  external: [],
  legalComments: 'none',
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
