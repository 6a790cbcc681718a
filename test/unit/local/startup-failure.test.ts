import { describe, expect, it } from 'vitest';
import { describeStartupFailure, makeStartupFailureScanner } from '../../../scripts/local/startup-failure.ts';

/** What osls 4 with serverless-esbuild prints when a handler does not bundle (stderr, then stdout). */
const ESBUILD_STDERR = [
  '✘ [ERROR] Could not resolve "./does-not-exist.ts"',
  '',
  '    functions/credentials.ts:1:21:',
  "      1 │ import { nope } from './does-not-exist.ts';",
  '        ╵                      ~~~~~~~~~~~~~~~~~~~~~',
  '',
  'Environment: linux, node 24.21.0, osls 4.3.1 (local)',
  'Docs:        github.com/oss-serverless/osls',
  '',
].join('\n');
const OSLS_STDOUT = [
  'Error:',
  'Error: Build failed with 1 error:',
  'functions/credentials.ts:1:21: ERROR: Could not resolve "./does-not-exist.ts"',
  '    at failureErrorWithLog (/work/node_modules/esbuild/lib/main.js:1752:15)',
  '',
].join('\n');

/** Lines serverless-offline prints on a healthy start, and handler log lines. */
const HEALTHY = [
  'Starting Offline at stage dev (us-east-1)',
  'Offline [http for lambda] listening on http://127.0.0.1:41235',
  '   ┌───────────────────────────────────────────────────┐',
  '   │   GET | http://127.0.0.1:3000/devices             │',
  'Server ready: http://127.0.0.1:3000 🚀',
  '{"level":"ERROR","message":"request","error":"Error: Build failed with 2 errors"}',
  '(λ: getUser) RequestId: 1 Duration: 3 ms',
];

/** What a fresh scanner finds when these lines arrive whole, in one chunk. */
const scanLines = (lines: readonly string[]) => makeStartupFailureScanner().push(lines.map((line) => `${line}\n`).join(''));

describe('a startup failure in complete output lines', () => {
  it('reports an esbuild error with the file and position it names', () => {
    expect(scanLines(ESBUILD_STDERR.split('\n'))).toEqual({
      kind: 'bundling',
      summary: 'functions/credentials.ts:1:21: Could not resolve "./does-not-exist.ts"',
    });
  });

  it('reports the build osls says failed with its first error', () => {
    expect(scanLines(OSLS_STDOUT.split('\n'))).toEqual({
      kind: 'bundling',
      summary: 'functions/credentials.ts:1:21: ERROR: Could not resolve "./does-not-exist.ts"',
    });
  });

  it('still reports an esbuild error whose location has not arrived yet, and strips colours', () => {
    expect(
      scanLines(['\u001b[31m✘ \u001b[41;31m[\u001b[41;97mERROR\u001b[41;31m]\u001b[0m \u001b[1mExpected ";" but found "}"\u001b[0m']),
    ).toEqual({
      kind: 'bundling',
      summary: 'Expected ";" but found "}"',
    });
    expect(scanLines(['Error: Build failed with 3 errors:'])).toEqual({ kind: 'bundling', summary: 'Build failed with 3 errors:' });
  });

  it("reports any other error osls's error handler printed", () => {
    const failure = scanLines(['Environment: darwin, node 24.1.0, osls 4.3.1 (local)', 'Docs:        github.com/oss-serverless/osls']);
    expect(failure?.kind).toBe('osls');
  });

  it('finds nothing in a healthy start or in handler log lines that mention a failed build', () => {
    expect(scanLines(HEALTHY)).toBeUndefined();
    expect(scanLines([])).toBeUndefined();
  });
});

describe('makeStartupFailureScanner', () => {
  it('finds a failure split across chunks, even inside a multi-byte character', () => {
    const scanner = makeStartupFailureScanner();
    const bytes = Buffer.from(ESBUILD_STDERR, 'utf8');
    // Cut through "✘" (3 bytes in UTF-8): a chunk boundary must not garble it.
    const cuts = [1, 2, 30, bytes.length];
    const found = cuts.map((end, index) => scanner.push(bytes.subarray(index === 0 ? 0 : cuts[index - 1], end)));
    expect(found.slice(0, 2)).toEqual([undefined, undefined]);
    // The last chunk brings the error line and its location together, so both are reported.
    expect(found.find((failure) => failure !== undefined)).toEqual({
      kind: 'bundling',
      summary: 'functions/credentials.ts:1:21: Could not resolve "./does-not-exist.ts"',
    });
  });

  it('waits for the end of a line before judging it', () => {
    const scanner = makeStartupFailureScanner();
    expect(scanner.push('Error: Build failed with 1 er')).toBeUndefined();
    expect(scanner.push('ror:\r\nfunctions/get-user.ts:3:1: ERROR: Unexpected "}"\n')).toEqual({
      kind: 'bundling',
      summary: 'functions/get-user.ts:3:1: ERROR: Unexpected "}"',
    });
  });

  it('stays quiet through a healthy start', () => {
    const scanner = makeStartupFailureScanner();
    expect(HEALTHY.map((line) => scanner.push(`${line}\n`)).filter((failure) => failure !== undefined)).toEqual([]);
  });
});

describe('describeStartupFailure', () => {
  it('says in one line that bundling failed and where', () => {
    const line = describeStartupFailure({ kind: 'bundling', summary: 'functions/x.ts:1:2: Could not resolve "y"' });
    expect(line).toMatch(/^bundling failed: functions\/x\.ts:1:2: Could not resolve "y"/);
    expect(line).not.toContain('\n');
  });

  it("names the file as the project knows it, not as esbuild saw it from the stack's own directory", () => {
    const failure = { kind: 'bundling', summary: '../../work/app/functions/x.ts:1:2: Could not resolve "y"' } as const;
    const line = describeStartupFailure(failure, (path) => path.replace('../../work/app/', ''));
    expect(line).toMatch(/^bundling failed: functions\/x\.ts:1:2: Could not resolve "y"/);
  });
});
