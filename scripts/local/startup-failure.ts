import { StringDecoder } from 'node:string_decoder';
import { stripVTControlCharacters } from 'node:util';

/**
 * Why serverless-offline will never become ready, read from its output. On a bundling error
 * serverless-esbuild's build rejects and osls prints its error, but the esbuild service and file
 * watcher keep the process alive: without this, `npm start` would wait out its whole ready timeout.
 */
export interface StartupFailure {
  kind: 'bundling' | 'osls';
  /** One line: where and what, e.g. `functions/x.ts:1:21: Could not resolve "./y.ts"`. */
  summary: string;
}

/** esbuild's own log line for each error (stderr). */
const ESBUILD_ERROR = /^✘ \[ERROR\] (.+)$/;
/** The location esbuild prints under that line, indented: `    functions/x.ts:1:21:`. */
const ESBUILD_LOCATION = /^\s+(\S+:\d+:\d+):$/;
/** The rejected build as osls reports it (stdout); the next line is the first error with its location. */
const BUILD_FAILED = /^(?:Error: )?Build failed with \d+ errors?:?$/;
/** The footer osls's top-level error handler prints before the error itself: something threw. */
const OSLS_ERROR_FOOTER = /^Environment: \S+, node \S+, osls \S+/;
/** How far below an esbuild error its location may be. */
const LOCATION_LOOKAHEAD = 3;

const clean = (line: string): string => stripVTControlCharacters(line).trimEnd();

/** The first startup failure these complete output lines report, if any. */
const findStartupFailure = (lines: readonly string[]): StartupFailure | undefined => {
  for (const [index, raw] of lines.entries()) {
    const line = clean(raw);
    const esbuildError = ESBUILD_ERROR.exec(line);
    if (esbuildError) {
      const location = lines
        .slice(index + 1, index + 1 + LOCATION_LOOKAHEAD)
        .map((next) => ESBUILD_LOCATION.exec(clean(next))?.[1])
        .find((found) => found !== undefined);
      return { kind: 'bundling', summary: location === undefined ? esbuildError[1]! : `${location}: ${esbuildError[1]!}` };
    }
    if (BUILD_FAILED.test(line)) {
      const firstError = clean(lines[index + 1] ?? '').trim();
      return { kind: 'bundling', summary: firstError === '' ? line.replace(/^Error: /, '') : firstError };
    }
    if (OSLS_ERROR_FOOTER.test(line)) return { kind: 'osls', summary: 'serverless-offline stopped on an error (shown above)' };
  }
  return undefined;
};

/**
 * Scans one output stream chunk by chunk (chunks split lines and multi-byte characters anywhere);
 * `push` returns the failure as soon as a chunk completes a line that reports one.
 */
export const makeStartupFailureScanner = (): { push: (chunk: Buffer | string) => StartupFailure | undefined } => {
  const decoder = new StringDecoder('utf8');
  let partial = '';
  return {
    push: (chunk) => {
      const lines = (partial + (typeof chunk === 'string' ? chunk : decoder.write(chunk))).split('\n');
      partial = lines.pop() ?? '';
      return findStartupFailure(lines.map((line) => line.replace(/\r$/, '')));
    },
  };
};

/** A summary's leading `path:line:column`. */
const LEADING_LOCATION = /^(\S+?)(:\d+:\d+)/;

/**
 * The one line `npm start` prints for a failure before it stops. esbuild names files relative to
 * the directory it ran in (the stack's private service directory); `projectPath` turns such a path
 * into the one the developer knows, relative to the project.
 */
export const describeStartupFailure = (failure: StartupFailure, projectPath: (path: string) => string = (path) => path): string =>
  failure.kind === 'bundling'
    ? `bundling failed: ${failure.summary.replace(LEADING_LOCATION, (_match, path: string, position: string) => `${projectPath(path)}${position}`)} (esbuild's errors are above; fix them and run npm start again)`
    : `${failure.summary}; nothing is served`;
