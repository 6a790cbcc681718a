import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, open, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { gunzipSync } from 'node:zlib';
import { generateTicketingUsers, startFakeTicketing, type FakeTicketing } from '../../support/fake-ticketing.ts';
import { createBucket, localS3Client, startS3Server, type S3Server } from '../../../scripts/local/s3-server.ts';
import { chatCsv, chatRow, HEADER, csvLine, readArchive, withoutMtimes } from '../../support/chat-import.ts';
import { LOCAL_AWS_ENV } from '../../../scripts/local/local-aws.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const NODE = join(ROOT, 'node_modules/.bin/node');

/** The environment without any import configuration of the machine running the tests. */
const baseEnv = (): NodeJS.ProcessEnv => {
  const env = { ...process.env };
  for (const name of Object.keys(env))
    if (name.startsWith('TICKETING_') || name.startsWith('AWS_') || name.startsWith('npm_config_')) delete env[name];
  return env;
};

const runCli = (args: string[], env: NodeJS.ProcessEnv = baseEnv()) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(NODE, ['scripts/import.ts', ...args], { cwd: ROOT, env, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
    });
  });

let directory: string;
beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'import-cli-'));
});
afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

describe('npm run import (scripts/import.ts)', () => {
  it('converts a local CSV into a local TAR and prints one JSON summary on stdout', async () => {
    const input = join(directory, 'in.csv');
    const output = join(directory, 'out.tar');
    await writeFile(input, chatCsv(Array.from({ length: 120 }, (_unused, n) => chatRow(n))));
    const result = await runCli([input, output]);
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      rows: 120,
      tickets: 40,
      comments: 120,
      users: 7,
      batches: 2,
      users_matched: 0,
      user_resolution: 'disabled',
    });
    expect(result.stderr).toMatch(/done: 120 rows/);
    const entries = await readArchive(await readFile(output));
    expect(entries.map((entry) => entry.name)).toEqual(['backup_tickets_100.json', 'backup_tickets_200.json']);
  });

  it.each([[[]], [['--read-threads', '2']]])(
    'imports from a named pipe the same archive as from the file (%j)',
    async (flags: string[]) => {
      const file = join(directory, 'in.csv');
      // About 4 MB, so that two reading threads cut it into several segments.
      await writeFile(
        file,
        chatCsv(Array.from({ length: 12_000 }, (_unused, n) => ({ ...chatRow(n), BODY: `<p>row ${n}, "quoted"\nand on</p>` }))),
      );
      const fromFile = await runCli([...flags, file, join(directory, 'from-file.tar')]);
      expect(fromFile.code).toBe(0);
      const fifo = join(directory, 'pipe.csv');
      await promisify(execFile)('mkfifo', [fifo]);
      const writing = (async () => {
        const writer = await open(fifo, 'w');
        await writer.write(await readFile(file));
        await writer.close();
      })();
      const fromPipe = await runCli([...flags, fifo, join(directory, 'from-pipe.tar')]);
      await writing;
      expect(fromPipe.code).toBe(0);
      expect(fromPipe.stdout).toBe(fromFile.stdout);
      const entries = async (name: string) =>
        (await readArchive(await readFile(join(directory, name)))).map((entry) => [entry.name, entry.text]);
      expect(await entries('from-pipe.tar')).toEqual(await entries('from-file.tar'));
    },
  );

  it('exits non-zero with one clear line and no output file when a column is missing', async () => {
    const input = join(directory, 'in.csv');
    await writeFile(input, chatCsv([chatRow(0)], { columns: HEADER.filter((column) => column !== 'COMMENT_PUBLIC') }));
    const result = await runCli([input, join(directory, 'out.tar')]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/^import failed: .*COMMENT_PUBLIC/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(await readdir(directory)).toEqual(['in.csv']);
  });

  it.each([[[]], [['--read-threads', '2']]])(
    'exits non-zero naming the count when the header has more than 1000 columns, writing nothing (%j)',
    async (flags: string[]) => {
      const input = join(directory, 'in.csv');
      const header = [...HEADER, ...Array.from({ length: 250_000 }, (_unused, n) => `EXTRA_${n}`)];
      await writeFile(
        input,
        chatCsv(
          Array.from({ length: 5 }, (_unused, n) => chatRow(n)),
          { columns: header },
        ),
      );
      const result = await runCli([...flags, input, join(directory, 'out.tar'), '--rejects', join(directory, 'rejects.csv')]);
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr.trim()).toBe(`import failed: CSV header has ${header.length} columns; an import reads at most 1000`);
      expect(await readdir(directory)).toEqual(['in.csv']);
    },
  );

  it('exits non-zero naming a source file that does not exist', async () => {
    const missing = join(directory, 'missing.csv');
    const result = await runCli([missing, join(directory, 'out.tar')]);
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(`import failed: Source file ${missing} does not exist`);
    expect(await readdir(directory)).toEqual([]);
  });

  // By default a second core parses in a worker thread (this machine has two); --single-thread keeps
  // one; --read-threads 2 cuts the source between two.
  it.each([[[]], [['--single-thread']], [['--read-threads', '2']]])(
    'stops on Ctrl-C (SIGINT) with exit 130 and leaves neither the archive, the rejects nor their temporary files (%j)',
    async (flags: string[]) => {
      const fifo = join(directory, 'in.csv');
      await promisify(execFile)('mkfifo', [fifo]);
      const args = ['scripts/import.ts', ...flags, '--rejects', join(directory, 'rejects.csv'), fifo, join(directory, 'out.tar')];
      const child = spawn(NODE, args, { cwd: ROOT, env: baseEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      let running = true;
      const exited = new Promise<number | null>((resolve) =>
        child.once('exit', (code) => {
          running = false;
          resolve(code);
        }),
      );
      // A slow producer: rows keep trickling in until the CLI goes away (EPIPE) or the bound is hit.
      const writer = await open(fifo, 'w');
      const producing = (async () => {
        await writer.write(csvLine(HEADER));
        for (let n = 0; running && n < 2_000; n += 1) {
          await writer.write(csvLine(HEADER.map((column) => chatRow(n)[column])));
          await delay(10);
        }
      })().catch(() => undefined);
      try {
        // The CLI is mid-read once its temporary archive exists.
        for (let attempt = 0; attempt < 200 && !(await readdir(directory)).some((name) => name.endsWith('.partial')); attempt += 1)
          await delay(25);
        expect((await readdir(directory)).some((name) => name.endsWith('.partial'))).toBe(true);
        child.kill('SIGINT');
        // Together, so that an unexpected exit shows what the CLI said.
        const code = await exited;
        expect({ code, stderr: stderr.trim() }).toEqual({ code: 130, stderr: 'import failed: interrupted by SIGINT; nothing was written' });
      } finally {
        running = false;
        await producing;
        await writer.close().catch(() => undefined);
      }
      expect(await readdir(directory)).toEqual(['in.csv']);
    },
  );

  it.each([[[]], [['--single-thread']]])(
    'stops on Ctrl-C while the source pipe has stalled, and on a second Ctrl-C at once, leaving no temporary file or spill (%j)',
    async (flags: string[]) => {
      const fifo = join(directory, 'in.csv');
      const spillRoot = join(directory, 'tmp');
      await mkdir(spillRoot);
      await promisify(execFile)('mkfifo', [fifo]);
      const args = ['scripts/import.ts', ...flags, fifo, join(directory, 'out.tar')];
      const stopsAfter = async (signals: number): Promise<{ code: number | null; beforeWriterClosed: boolean }> => {
        const child = spawn(NODE, args, { cwd: ROOT, env: { ...baseEnv(), TMPDIR: spillRoot }, stdio: ['ignore', 'pipe', 'pipe'] });
        const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
        // A producer that writes the header and a few rows, then stalls with the pipe open (as a
        // hung `zcat` or network copy would) until the CLI is gone or the bound is hit.
        const writer = await open(fifo, 'w');
        await writer.write(
          csvLine(HEADER) + Array.from({ length: 5 }, (_unused, n) => csvLine(HEADER.map((column) => chatRow(n)[column]))).join(''),
        );
        try {
          for (let attempt = 0; attempt < 200 && (await readdir(spillRoot)).length === 0; attempt += 1) await delay(25);
          expect(await readdir(spillRoot)).toHaveLength(1);
          for (let signal = 0; signal < signals; signal += 1) child.kill('SIGINT');
          const stalled = delay(20_000).then(() => 'still running' as const);
          const first = await Promise.race([exited, stalled]);
          const beforeWriterClosed = first !== 'still running';
          if (!beforeWriterClosed) child.kill('SIGKILL');
          return { code: await exited, beforeWriterClosed };
        } finally {
          await writer.close().catch(() => undefined);
        }
      };
      expect(await stopsAfter(1)).toEqual({ code: 130, beforeWriterClosed: true });
      expect(await readdir(spillRoot)).toEqual([]);
      expect(await readdir(directory)).toEqual(['in.csv', 'tmp']);
      // Two at once: the second may come before the first's clean-up is done, and exits there and then.
      expect(await stopsAfter(2)).toEqual({ code: 130, beforeWriterClosed: true });
      expect(await readdir(spillRoot)).toEqual([]);
      expect((await readdir(directory)).sort()).toEqual(['in.csv', 'tmp']);
    },
  );

  it('stops on Ctrl-C while the source pipe has no writer yet', async () => {
    const fifo = join(directory, 'in.csv');
    await promisify(execFile)('mkfifo', [fifo]);
    const child = spawn(NODE, ['scripts/import.ts', fifo, join(directory, 'out.tar')], {
      cwd: ROOT,
      env: baseEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    // Started, waiting on the pipe: its temporary archive exists.
    for (let attempt = 0; attempt < 200 && !(await readdir(directory)).some((name) => name.endsWith('.partial')); attempt += 1)
      await delay(25);
    child.kill('SIGINT');
    const outcome = await Promise.race([exited, delay(15_000).then(() => 'still running' as const)]);
    if (outcome === 'still running') child.kill('SIGKILL');
    expect(outcome).toBe(130);
    expect(stderr.trim()).toBe('import failed: interrupted by SIGINT; nothing was written');
    expect(await readdir(directory)).toEqual(['in.csv']);
  });

  it('fails a Windows-1252 file by default naming line and offset, leaving nothing; imports it with --encoding windows-1252', async () => {
    const input = join(directory, 'in.csv');
    const output = join(directory, 'out.tar');
    await writeFile(input, Buffer.from(chatCsv([{ ...chatRow(0), BODY: '<p>Café</p>', NAME: 'René' }]), 'latin1'));
    const failed = await runCli([input, output]);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toBe('');
    expect(failed.stderr.trim()).toMatch(
      /^import failed: CSV is not valid UTF-8: undecodable bytes on line 2, at byte offset \d+ \(from 0\); .*--encoding/,
    );
    expect(await readdir(directory)).toEqual(['in.csv']);

    const imported = await runCli(['--encoding', 'windows-1252', input, output]);
    expect(imported.code).toBe(0);
    expect(JSON.parse(imported.stdout)).toMatchObject({ rows: 1, comments: 1, users: 1, encoding: 'windows-1252' });
    const [entry] = await readArchive(await readFile(output));
    expect(entry!.json.data.tickets.comments[0]!.html_body).toBe('<p>Café</p>');
    expect(entry!.json.data.tickets.users[0]!.name).toBe('René');
  });

  it('writes a rejects file beside the archive with --rejects, and only the rejects with --dry-run', async () => {
    const input = join(directory, 'in.csv');
    await writeFile(input, chatCsv([chatRow(0), { ...chatRow(1), EMAIL: 'broken' }, chatRow(2)]));
    const result = await runCli(['--rejects', join(directory, 'rejects.csv'), input, join(directory, 'out.tar')]);
    expect(result.code).toBe(0);
    const summary = JSON.parse(result.stdout) as { dropped: { users: { bad_email: number } } };
    expect(summary.dropped.users.bad_email).toBe(1);
    const rejects = await readFile(join(directory, 'rejects.csv'), 'utf8');
    expect(rejects).toContain('\n2,4,user,bad_email,EMAIL,broken\n');

    const dry = await runCli(['--dry-run', '--rejects', join(directory, 'dry-rejects.csv'), input]);
    expect(dry.code).toBe(0);
    expect(JSON.parse(dry.stdout)).toEqual(summary);
    expect(dry.stderr).toMatch(/^dry run done: 3 rows · \d+ rows\/s · 0\.0 MB read · [\d.]+ MB\/s · 100\.0 % · [\d.]+ s\n$/);
    expect(await readFile(join(directory, 'dry-rejects.csv'), 'utf8')).toBe(rejects);
    expect((await readdir(directory)).sort()).toEqual(['dry-rejects.csv', 'in.csv', 'out.tar', 'rejects.csv']);
  });

  it('exits 2 when a run other than a dry run has no destination', async () => {
    const result = await runCli([join(directory, 'in.csv')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^import: expected a source and a destination, got 1 path \(".*in\.csv"\)\nusage:/);
  });

  it('exits 2 naming the paths it got when there are too many or none', async () => {
    const three = await runCli(['a.csv', 'b.tar', 'c.tar']);
    expect(three.code).toBe(2);
    expect(three.stderr).toMatch(/^import: expected a source and a destination, got 3 paths \("a\.csv", "b\.tar", "c\.tar"\)\nusage:/);
    const none = await runCli([]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^import: expected a source and a destination, got no path\nusage:/);
  });

  it.each(['--rejects', '--encoding'])('exits 2 saying %s took the source as its value when its own value is missing', async (option) => {
    const result = await runCli([option, 'in.csv', join(directory, 'out.tar')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      new RegExp(
        `^import: expected a source and a destination, got 1 path \\(".*out\\.tar"\\); ${option} took "in\\.csv" as its value\nusage:`,
      ),
    );
    expect(await readdir(directory)).toEqual([]);
  });

  it('does not blame an option whose value is what it asks for', async () => {
    const result = await runCli(['--encoding', 'latin1', 'in.csv']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^import: expected a source and a destination, got 1 path \("in\.csv"\)\nusage:/);
  });

  it('exits 2 saying npm kept an option written before --', async () => {
    // `npm run import --dry-run in.csv` runs the script with in.csv alone and npm_config_dry_run set.
    const result = await runCli(['in.csv'], { ...baseEnv(), npm_config_dry_run: 'true' });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /^import: expected a source and a destination, got 1 path \("in\.csv"\); npm kept --dry-run: write options after -- \(npm run import -- --dry-run …\)\n/,
    );
  });

  it('exits 2 naming an unknown --encoding label, before reading anything', async () => {
    const result = await runCli(['--encoding', 'klingon', join(directory, 'absent.csv'), join(directory, 'out.tar')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /^import: unknown encoding "klingon" \(expected a WHATWG label such as utf-8, windows-1252 or utf-16le\)\nusage:/,
    );
    expect(await readdir(directory)).toEqual([]);
  });

  it.each(['0', '1.5', 'two', '17'])('exits 2 naming a --read-threads of %s, before reading anything', async (count) => {
    const result = await runCli(['--read-threads', count, join(directory, 'absent.csv'), join(directory, 'out.tar')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      new RegExp(`^import: --read-threads must be a whole number from 1 to 16 \\(got "${count.replace('.', '\\.')}"\\)\nusage:`),
    );
    expect(await readdir(directory)).toEqual([]);
  });

  it('exits 2 when --single-thread and --read-threads are both given', async () => {
    const result = await runCli(['--single-thread', '--read-threads', '2', join(directory, 'absent.csv'), join(directory, 'out.tar')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^import: --single-thread and --read-threads each say how many threads read: give one of them\nusage:/);
  });

  it('exits 2 with the usage when the arguments are wrong', async () => {
    const result = await runCli([join(directory, 'only-one.csv')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/usage: npm run import -- \[options\] <source/);
    const unknown = await runCli(['--frobnicate', join(directory, 'a.csv'), join(directory, 'b.tar')]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(
      /^import: unknown option --frobnicate \(a path that starts with "-" can be written \.\/--frobnicate\)\nusage:/,
    );
    const short = await runCli(['-x', join(directory, 'a.csv'), join(directory, 'b.tar')]);
    expect(short.code).toBe(2);
    expect(short.stderr).toMatch(/^import: unknown option -x \(a path that starts with "-" can be written \.\/-x\)\n/);
    const clustered = await runCli(['-hx', join(directory, 'a.csv'), join(directory, 'b.tar')]);
    expect(clustered.stderr).toMatch(/^import: unknown option -x \(in "-hx"\)\nusage:/);
    const slip = await runCli(['--dryrun', join(directory, 'a.csv')]);
    expect(slip.code).toBe(2);
    expect(slip.stderr).toMatch(/^import: unknown option --dryrun; did you mean --dry-run\?\nusage:/);
    const missingValue = await runCli([join(directory, 'a.csv'), join(directory, 'b.tar'), '--encoding']);
    expect(missingValue.code).toBe(2);
    expect(missingValue.stderr).toMatch(/^import: Option '--encoding <value>' argument missing\nusage:/);
  });

  it('exits non-zero naming a missing variable when the listing is half configured', async () => {
    const input = join(directory, 'in.csv');
    await writeFile(input, chatCsv([chatRow(0)]));
    const result = await runCli([input, join(directory, 'out.tar')], { ...baseEnv(), TICKETING_URL: 'http://127.0.0.1:9/' });
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe('import failed: Configuration error: TICKETING_USERNAME is required but not set');
  });

  it('exits 1 with one line and no stack when the listing holds an id beyond the signed 64-bit range', async () => {
    const listing = await startFakeTicketing({ users: [{ id: '99999999999999999999', email: 'person.4@example.com', name: 'P4' }] });
    try {
      const input = join(directory, 'in.csv');
      await writeFile(input, chatCsv(Array.from({ length: 14 }, (_unused, n) => chatRow(n))));
      const env = { ...baseEnv(), TICKETING_URL: listing.url, TICKETING_USERNAME: listing.username, TICKETING_PASSWORD: listing.password };
      const result = await runCli([input, join(directory, 'out.tar')], env);
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr.trim()).toBe(
        `import failed: User listing ${listing.url}/api/v1/users.json?page=1 answered something unreadable: users[0].id 99999999999999999999 is outside the signed 64-bit range`,
      );
      expect(await readdir(directory)).toEqual(['in.csv']);
    } finally {
      await listing.close();
    }
  });

  it('exits 1 naming an existing directory given as the destination before reading the listing or the source', async () => {
    const listing = await startFakeTicketing({ users: [] });
    try {
      const input = join(directory, 'in.csv');
      const destination = join(directory, 'out.tar');
      await writeFile(input, chatCsv([chatRow(0)]));
      await mkdir(destination);
      const env = { ...baseEnv(), TICKETING_URL: listing.url, TICKETING_USERNAME: listing.username, TICKETING_PASSWORD: listing.password };
      const result = await runCli([input, destination], env);
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr.trim()).toBe(`import failed: Destination ${destination} is a directory, not a file`);
      expect(listing.requests).toEqual([]);
      expect((await readdir(directory)).sort()).toEqual(['in.csv', 'out.tar']);
      expect(await readdir(destination)).toEqual([]);
    } finally {
      await listing.close();
    }
  });

  it('writes a gzip-compressed archive to a .tar.gz destination, its gunzip the .tar a plain run writes', async () => {
    const input = join(directory, 'in.csv');
    await writeFile(input, chatCsv(Array.from({ length: 250 }, (_unused, n) => chatRow(n))));
    const plain = await runCli([input, join(directory, 'out.tar')]);
    const gzip = await runCli([input, join(directory, 'out.tar.gz')]);
    expect(gzip.code).toBe(0);
    expect(JSON.parse(gzip.stdout)).toEqual({ ...JSON.parse(plain.stdout), compression: 'gzip' });
    expect(JSON.parse(plain.stdout)).toMatchObject({ compression: 'none' });
    // Two runs: the same bytes but for each entry's mtime.
    const tar = await readFile(join(directory, 'out.tar'));
    expect(withoutMtimes(gunzipSync(await readFile(join(directory, 'out.tar.gz')))).equals(withoutMtimes(tar))).toBe(true);
  });

  it('says on stderr, in one line, that a listing past 10,000 users is read again by cursor, and resolves users from it', async () => {
    const users = generateTicketingUsers(10_050);
    users[10_040] = { id: '9223372036854775807', email: 'person.4@example.com', name: 'P4' };
    const listing = await startFakeTicketing({ users });
    try {
      const input = join(directory, 'in.csv');
      await writeFile(input, chatCsv(Array.from({ length: 14 }, (_unused, n) => chatRow(n))));
      const env = { ...baseEnv(), TICKETING_URL: listing.url, TICKETING_USERNAME: listing.username, TICKETING_PASSWORD: listing.password };
      const result = await runCli([input, join(directory, 'out.tar')], env);
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ users_matched: 1, user_resolution: 'destination' });
      const lines = result.stderr.trim().split('\n');
      expect(lines).toHaveLength(2);
      expect(lines[0]).toBe(
        'User listing refused page 101 (HTTP 400: no page-number paging past 10,000 users); reading it again from the start with cursor paging (TICKETING_PAGINATION=cursor starts there)',
      );
      expect(lines[1]).toMatch(/^done: 14 rows/);
      expect((await readArchive(await readFile(join(directory, 'out.tar'))))[0]?.text).toContain(
        '{"id":9223372036854775807,"name":"Person 4"',
      );

      // With TICKETING_PAGINATION=cursor the read starts there: no page number, no line.
      const cursor = await runCli([input, join(directory, 'cursor.tar')], { ...env, TICKETING_PAGINATION: 'cursor' });
      expect(cursor.code).toBe(0);
      expect(cursor.stderr.trim().split('\n')).toHaveLength(1);
      expect(JSON.parse(cursor.stdout)).toEqual(JSON.parse(result.stdout));
    } finally {
      await listing.close();
    }
  });

  it('exits 1 naming TICKETING_PAGINATION when it is neither pages nor cursor', async () => {
    const input = join(directory, 'in.csv');
    await writeFile(input, chatCsv([chatRow(0)]));
    const result = await runCli([input, join(directory, 'out.tar')], { ...baseEnv(), TICKETING_PAGINATION: 'offset' });
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe('import failed: Configuration error: TICKETING_PAGINATION must be "pages" or "cursor"');
    expect(await readdir(directory)).toEqual(['in.csv']);
  });

  it('rejects a malformed S3 location before doing anything', async () => {
    const result = await runCli(['s3://Not_A_Bucket/in.csv', join(directory, 'out.tar')]);
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(
      'import failed: "s3://Not_A_Bucket/in.csv" does not name a valid S3 bucket (expected s3://bucket/key)',
    );
  });
});

describe('npm run import between S3 objects with a ticketing listing', () => {
  let s3Server: S3Server;
  let ticketing: FakeTicketing;
  let s3: S3Client;
  beforeAll(async () => {
    s3Server = await startS3Server();
    await createBucket({ endpoint: s3Server.endpoint, bucket: 'cli-bucket' });
    ticketing = await startFakeTicketing({ users: [{ id: '123456789012345678', email: 'person.4@example.com', name: 'P4' }] });
    s3 = localS3Client(s3Server.endpoint);
  });
  afterAll(async () => {
    s3.destroy();
    await ticketing.close();
    await s3Server.stop();
  });

  it('reads s3://…, resolves users and writes s3://…', async () => {
    await s3.send(
      new PutObjectCommand({
        Bucket: 'cli-bucket',
        Key: 'in/chat.csv',
        Body: chatCsv(Array.from({ length: 14 }, (_unused, n) => chatRow(n))),
      }),
    );
    const env = {
      ...baseEnv(),
      AWS_ENDPOINT_URL_S3: s3Server.endpoint,
      ...LOCAL_AWS_ENV,
      TICKETING_URL: ticketing.url,
      TICKETING_USERNAME: ticketing.username,
      TICKETING_PASSWORD: ticketing.password,
    };
    const result = await runCli(['s3://cli-bucket/in/chat.csv', 's3://cli-bucket/out/tickets.tar'], env);
    expect(result.stderr).not.toContain(ticketing.password);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ rows: 14, users: 7, users_matched: 1, user_resolution: 'destination' });
    const tar = await (await s3.send(new GetObjectCommand({ Bucket: 'cli-bucket', Key: 'out/tickets.tar' }))).Body!.transformToByteArray();
    const [entry] = await readArchive(tar);
    expect(entry?.text).toContain('{"id":123456789012345678,"name":"Person 4","email":"Person.4@Example.com"}');
  });
});
