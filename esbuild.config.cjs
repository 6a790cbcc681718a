/* global require, module */
/* eslint-disable @typescript-eslint/no-require-imports -- serverless-esbuild require()s this file, so it is CommonJS */
// serverless-esbuild loads `custom.esbuild.config` with require() and calls its export. The options
// live in scripts/esbuild-options.ts, shared with `npm run build` and the cold-start bench, so
// deployment bundles exactly like they do (Node 24 requires a .ts ES module natively).
const { serverlessEsbuildConfig } = require('./scripts/esbuild-options.ts');

module.exports = () => serverlessEsbuildConfig();
