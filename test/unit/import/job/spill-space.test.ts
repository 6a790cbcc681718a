import { describe, expect, it } from 'vitest';
import { JobError } from '../../../../lib/errors.ts';
import { makeSpillWatch } from '../../../../lib/import/job/spill-space.ts';

const MB = 1024 * 1024;
const GB = 1e9;

describe('makeSpillWatch', () => {
  const room = { tmpDir: '/tmp', freeBytes: 10 * GB, sourceBytes: 4 * GB };

  it('fails once the first hundredth of a known source projects a spill beyond the free space, naming the figures', () => {
    const watch = makeSpillWatch(room);
    // Three spill bytes per source byte: 12 GB for the whole, but not judged before 40 MB were read.
    expect(() => watch(39 * 1e6, 3 * 39 * 1e6)).not.toThrow();
    const error = (() => {
      try {
        watch(41 * 1e6, 3 * 41 * 1e6);
      } catch (thrown) {
        return thrown as Error;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(JobError);
    expect(error?.message).toBe(
      'Source is 4.0 GB: its first 41 MB spilled 123 MB (3.00 bytes per source byte), so the whole would need about 12.0 GB in /tmp, ' +
        'but only 10.0 GB were free; split the export, or run it where the temporary directory has room',
    );
  });

  it('lets a spill that fits go on, however far the run is', () => {
    const watch = makeSpillWatch(room);
    for (let read = 0; read <= 4 * GB; read += 0.5 * GB) expect(() => watch(read, 2.4 * read)).not.toThrow();
  });

  it('judges a small source from its first 32 MiB, and one smaller still only at its end', () => {
    const small = makeSpillWatch({ ...room, freeBytes: 200 * MB, sourceBytes: 100 * MB });
    expect(() => small(31 * MB, 93 * MB)).not.toThrow();
    expect(() => small(33 * MB, 99 * MB)).toThrow(JobError);
    const tiny = makeSpillWatch({ ...room, freeBytes: 20 * MB, sourceBytes: 10 * MB });
    expect(() => tiny(9 * MB, 19 * MB)).not.toThrow();
    expect(() => tiny(10 * MB, 21 * MB)).toThrow(JobError);
  });

  it('stops a source of unknown size once its spill exceeds the free space, and not before', () => {
    const watch = makeSpillWatch({ ...room, freeBytes: 1 * GB, sourceBytes: undefined });
    expect(() => watch(0.2 * GB, 1 * GB)).not.toThrow();
    expect(() => watch(0.21 * GB, 1.01 * GB)).toThrowError(
      'The spill files filled the 1.0 GB free in /tmp after 210 MB of the source; split the export, or run it where the temporary directory has room',
    );
  });
});
