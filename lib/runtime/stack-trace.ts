import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';

/**
 * Stack traces in TypeScript terms, with the source maps read only when a trace is: the functions run
 * without `--enable-source-maps`, which would parse every bundle's map at each cold start
 * (docs/architecture.md#cold-start), while a logged trace is rare (a 5xx). Each frame in a bundle
 * (`file:///var/task/functions/devices.mjs:1:2345`) becomes its source position
 * (`lib/devices/device-list.ts:61:7`); a frame without a map, or outside any, stays as it was.
 */
const FRAME = /(file:\/\/\/[^\s()]+?\.mjs):(\d+):(\d+)/g;

// Per bundle or chunk file: its map, or null when it has none (read at most once per container).
const maps = new Map<string, SourceMap | null>();

const mapOf = (fileUrl: string): SourceMap | null => {
  let map = maps.get(fileUrl);
  if (map === undefined) {
    try {
      map = new SourceMap(JSON.parse(readFileSync(`${fileURLToPath(fileUrl)}.map`, 'utf8')) as ConstructorParameters<typeof SourceMap>[0]);
    } catch {
      map = null;
    }
    maps.set(fileUrl, map);
  }
  return map;
};

// `../../../lib/x.ts` relative to wherever the bundle was built: the project path is what a reader wants.
const projectPath = (source: string): string => source.replace(/^(?:\.\.\/)+/, '');

export const readableStack = (stack: string): string =>
  stack.replace(FRAME, (frame, fileUrl: string, line: string, column: string) => {
    const entry = mapOf(fileUrl)?.findEntry(Number(line) - 1, Number(column) - 1);
    if (entry === undefined || !('originalSource' in entry)) return frame;
    return `${projectPath(entry.originalSource)}:${entry.originalLine + 1}:${entry.originalColumn + 1}`;
  });
