import { build, type BuildOptions, type Metafile } from 'esbuild';
import { rm, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { BUNDLE_EXTENSION, bundleOptions } from './esbuild-options.ts';
import { readFunctionEntries, type FunctionEntry } from './function-entries.ts';

export interface BundleReport {
  name: string;
  /** The bundle Lambda loads, e.g. `dist/devices/functions/devices.mjs`. */
  file: string;
  /** What Lambda loads at init: the bundle and the chunks it imports statically. */
  bytes: number;
  /** The chunks loaded only when the code needs them (the SSM client, ioredis, the SDK's credential providers). */
  chunkBytes: number;
  mapBytes: number;
  /** The project's own modules (lib/, functions/) the bundle can load, and those it loads at init. */
  projectModules: { all: number; atInit: number };
  /** Bytes loaded at init per npm package (or `(project)`), largest first. */
  contributors: Array<{ source: string; bytes: number }>;
  /** What the bundle and its chunks load from outside themselves at run time (only Node built-ins when nothing is external). */
  externalImports: string[];
}

const packageOf = (input: string): string => {
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input);
  return match?.[1] ?? '(project)';
};

/** How many of the project's own modules (lib/, functions/) `outputs` hold. */
const projectModulesIn = (metafile: Metafile, outputs: readonly string[]): number =>
  new Set(
    outputs.flatMap((output) => Object.keys(metafile.outputs[output]?.inputs ?? {}).filter((input) => /^(lib|functions)\//.test(input))),
  ).size;

const contributorsOf = (metafile: Metafile, outputs: readonly string[]): BundleReport['contributors'] => {
  const totals = new Map<string, number>();
  for (const output of outputs) {
    for (const [input, { bytesInOutput }] of Object.entries(metafile.outputs[output]?.inputs ?? {})) {
      const source = packageOf(input);
      totals.set(source, (totals.get(source) ?? 0) + bytesInOutput);
    }
  }
  return [...totals].map(([source, bytes]) => ({ source, bytes })).sort((a, b) => b.bytes - a.bytes);
};

/** The output and every chunk it imports statically, transitively: what loading it loads. */
const loadedWith = (metafile: Metafile, serviceDir: string, output: string): string[] => {
  const byPath = new Map(Object.keys(metafile.outputs).map((path) => [resolve(serviceDir, path), path]));
  const loaded = new Set<string>();
  const visit = (path: string): void => {
    if (loaded.has(path)) return;
    loaded.add(path);
    for (const item of metafile.outputs[path]?.imports ?? []) {
      const chunk = item.kind === 'import-statement' && !item.external ? byPath.get(resolve(serviceDir, item.path)) : undefined;
      if (chunk !== undefined) visit(chunk);
    }
  };
  visit(output);
  return [...loaded];
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
  if (output === undefined) throw new Error(`${entry.name}: esbuild wrote no ${file}`);
  const mapBytes = (await stat(`${file}.map`)).size;
  const atInit = new Set(loadedWith(result.metafile, serviceDir, output));
  const code = outputs.filter((path) => path.endsWith(BUNDLE_EXTENSION));
  const sizeOf = (paths: readonly string[]) => paths.reduce((sum, path) => sum + result.metafile.outputs[path]!.bytes, 0);
  // The bundle's and its chunks' (a chunk shares what two code paths import).
  const imports = outputs.flatMap((path) => result.metafile.outputs[path]?.imports ?? []);
  return {
    name: entry.name,
    file,
    bytes: sizeOf([...atInit]),
    chunkBytes: sizeOf(code.filter((path) => !atInit.has(path))),
    mapBytes,
    projectModules: { all: projectModulesIn(result.metafile, outputs), atInit: projectModulesIn(result.metafile, [...atInit]) },
    contributors: contributorsOf(result.metafile, [...atInit]),
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
