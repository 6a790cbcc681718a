import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { makeTarWriter } from '../../../../lib/import/write/tar-writer.ts';
import { readArchive } from '../../../support/chat-import.ts';

const collect = (stream: PassThrough): Buffer[] => {
  const parts: Buffer[] = [];
  stream.on('data', (part: Buffer) => parts.push(part));
  return parts;
};

describe('makeTarWriter', () => {
  it('writes a POSIX ustar archive whose entries read back in order, and ends the output', async () => {
    const output = new PassThrough();
    const parts = collect(output);
    const tar = makeTarWriter(output, new Date('2026-01-01T00:00:00Z'));
    await tar.addFile('backup_tickets_100.json', Buffer.from('{"a":1}'));
    await tar.addFile('backup_tickets_200.json', Buffer.from('é'.repeat(600)));
    await tar.finish();
    expect(output.writableFinished).toBe(true);
    const archive = Buffer.concat(parts);
    expect(archive.length % 512).toBe(0);
    expect(archive.subarray(257, 262).toString('latin1')).toBe('ustar');
    const entries = await readArchive(archive);
    expect(entries.map(({ name, text }) => [name, text])).toEqual([
      ['backup_tickets_100.json', '{"a":1}'],
      ['backup_tickets_200.json', 'é'.repeat(600)],
    ]);
  });

  it('writes just the end-of-archive blocks when there is no entry', async () => {
    const output = new PassThrough();
    const parts = collect(output);
    const tar = makeTarWriter(output);
    await tar.finish();
    const archive = Buffer.concat(parts);
    expect(archive.length).toBe(1024);
    expect(await readArchive(archive)).toEqual([]);
  });

  it('rejects an entry once the output failed, and abort leaves the output un-ended', async () => {
    const output = new PassThrough();
    output.on('error', () => {});
    const tar = makeTarWriter(output);
    output.destroy(new Error('upload failed'));
    await expect(tar.addFile('x.json', Buffer.alloc(10))).rejects.toThrowError('upload failed');
    tar.abort();
    expect(output.writableEnded).toBe(false);
  });

  it('rejects a pending entry when the output closes before the archive is complete', async () => {
    // Nobody reads this output, so the second entry waits on backpressure until the close.
    const output = new PassThrough({ highWaterMark: 1024 });
    const tar = makeTarWriter(output);
    await tar.addFile('a.json', Buffer.alloc(64 * 1024));
    const pending = tar.addFile('b.json', Buffer.alloc(64 * 1024));
    output.destroy();
    await expect(pending).rejects.toThrowError(/closed before the archive was complete/);
    tar.abort();
  });
});
