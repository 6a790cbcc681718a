import { build, type BuildOptions, type Metafile } from 'esbuild';
import { rm, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { BUNDLE_EXTENSION, bundleOptions } from './esbuild-options.ts';
import { readFunctionEntries, type FunctionEntry } from './function-entries.ts';

export interface BundleReport {
  name: string;
  /** The bundle Lambda loads, e.g. `dist/devices/functions/devices.mjs`. */
  file: string;
  /** The bundle Lambda loads at init. */
  bytes: number;
  /** Its chunks, loaded only when the code needs them (the SSM client, ioredis, the SDK's credential providers). */
  chunkBytes: number;
  mapBytes: number;
  /** Bytes of the output contributed per npm package (or `(project)`), largest first. */
  contributors: Array<{ source: string; bytes: number }>;
  /** What the bundle and its chunks load from outside themselves at run time (only Node built-ins when nothing is external). */
  externalImports: string[];
}

const packageOf = (input: string): string => {
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input);
  return match?.[1] ?? '(project)';
};

const contributorsOf = (metafile: Metafile, output: string): BundleReport['contributors'] => {
  const totals = new Map<string, number>();
  for (const [input, { bytesInOutput }] of Object.entries(metafile.outputs[output]?.inputs ?? {})) {
    const source = packageOf(input);
    totals.set(source, (totals.get(source) ?? 0) + bytesInOutput);
  }
  return [...totals].map(([source, bytes]) => ({ source, bytes })).sort((a, b) => b.bytes - a.bytes);
};

/** Bundles one entry exactly as serverless-esbuild does: the same options, output next to its path. */
export const bundleEntry = async (
  serviceDir: string,
  entry: FunctionEntry,
  outRoot: string,
  /** Only for reference bundles outside the service (the bench's baselines), e.g. `nodePaths`. */
  extra: Pick<BuildOptions, 'nodePaths'> = {},
): Promise<BundleReport> => {
  const outdir = join(outRoot, entry.name, dirname(entry.entry));
  const result = await build({
    ...bundleOptions(),
    ...extra,
    absWorkingDir: serviceDir,
    entryPoints: [entry.entry],
    outdir,
    metafile: true,
    logLevel: 'warning',
  });
  const file = join(outdir, basename(entry.entry, '.ts') + BUNDLE_EXTENSION);
  const outputs = Object.keys(result.metafile.outputs);
  const output = outputs.find((path) => resolve(serviceDir, path) === resolve(file));
  const [bytes, mapBytes] = await Promise.all([stat(file), stat(`${file}.map`)]).then(([code, map]) => [code.size, map.size]);
  const chunkBytes = outputs
    .filter((path) => path !== output && path.endsWith(BUNDLE_EXTENSION))
    .reduce((sum, path) => sum + result.metafile.outputs[path]!.bytes, 0);
  // The bundle's and its chunks' (a chunk shares what two code paths import).
  const imports = outputs.flatMap((path) => result.metafile.outputs[path]?.imports ?? []);
  return {
    name: entry.name,
    file,
    bytes: bytes!,
    chunkBytes,
    mapBytes: mapBytes!,
    contributors: output ? contributorsOf(result.metafile, output) : [],
    externalImports: [...new Set(imports.filter((item) => item.external).map((item) => item.path))].sort(),
  };
};

/**
 * Bundles every function of serverless.yml into `<outRoot>/<function>/`, the layout of its deployment
 * zip. With `outRoot` one level below the service (`dist`), the output is byte for byte what
 * serverless-esbuild deploys: a chunk's name hashes its source map, whose paths are relative to it.
 */
export const bundleFunctions = async (serviceDir: string, outRoot: string): Promise<BundleReport[]> => {
  await rm(outRoot, { recursive: true, force: true });
  const entries = await readFunctionEntries(serviceDir);
  return Promise.all(entries.map((entry) => bundleEntry(serviceDir, entry, outRoot)));
};
