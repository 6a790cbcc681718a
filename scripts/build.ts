import { relative } from 'node:path';
import { bundleFunctions } from './bundle-functions.ts';

/**
 * `npm run build`: bundles each function of serverless.yml with the deployment's esbuild options
 * (scripts/esbuild-options.ts) into `dist/<function>/`, laid out like its zip, and prints the sizes.
 */
const SIZE_BUDGET_BYTES = 1024 * 1024;
const serviceDir = process.cwd();
const kib = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KiB`;

const reports = await bundleFunctions(serviceDir, 'dist');
const rows = reports.map((report) => ({
  function: report.name,
  bundle: kib(report.bytes),
  'chunks (on demand)': kib(report.chunkBytes),
  'source map': kib(report.mapBytes),
  budget: report.bytes <= SIZE_BUDGET_BYTES ? 'ok (< 1 MiB)' : 'OVER 1 MiB',
  'largest parts': report.contributors
    .slice(0, 3)
    .map((part) => `${part.source} ${kib(part.bytes)}`)
    .join(', '),
  file: relative(serviceDir, report.file),
}));
console.table(rows);
if (reports.some((report) => report.bytes > SIZE_BUDGET_BYTES)) {
  console.error('A bundle is over 1 MiB: consider marking a large dependency external (the runtime ships the AWS SDK v3).');
  process.exitCode = 1;
}
