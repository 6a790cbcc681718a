import { describe, expect, it } from 'vitest';
import { checkImportFence, FencedLocationError } from '../../../../lib/import/job/import-fence.ts';
import { LocationError, parseLocation } from '../../../../lib/storage/location.ts';

const FENCE = { bucket: 'tickets-prod', inputPrefix: 'incoming/', archivePrefix: 'archives/' };
const at = (text: string) => parseLocation(text);
const refusal = (locations: Parameters<typeof checkImportFence>[1]): Error | undefined => {
  try {
    checkImportFence(FENCE, locations);
  } catch (error) {
    return error as Error;
  }
  return undefined;
};

describe('checkImportFence', () => {
  it('lets a source under the input prefix and an archive and rejects under the archive prefix through', () => {
    expect(
      refusal({
        source: at('s3://tickets-prod/incoming/2024/chat.csv'),
        destination: at('s3://tickets-prod/archives/2024/tickets.tar.gz'),
        rejects: at('s3://tickets-prod/archives/2024/rejects.csv'),
      }),
    ).toBeUndefined();
    // A dry run may leave the destination out.
    expect(refusal({ source: at('s3://tickets-prod/incoming/chat.csv') })).toBeUndefined();
  });

  it.each([
    [
      'a source in another bucket',
      { source: at('s3://other-bucket/incoming/chat.csv'), destination: at('s3://tickets-prod/archives/t.tar') },
      'The source "s3://other-bucket/incoming/chat.csv" names bucket other-bucket; an import here may use bucket tickets-prod only',
    ],
    [
      'a destination in another bucket',
      { source: at('s3://tickets-prod/incoming/chat.csv'), destination: at('s3://other-bucket/archives/t.tar') },
      'The destination "s3://other-bucket/archives/t.tar" names bucket other-bucket; an import here may use bucket tickets-prod only',
    ],
    [
      'rejects in another bucket',
      {
        source: at('s3://tickets-prod/incoming/chat.csv'),
        destination: at('s3://tickets-prod/archives/t.tar'),
        rejects: at('s3://other-bucket/archives/r.csv'),
      },
      'The rejects "s3://other-bucket/archives/r.csv" names bucket other-bucket; an import here may use bucket tickets-prod only',
    ],
    [
      'a source beside the input folder that shares its name',
      { source: at('s3://tickets-prod/incoming-evil/chat.csv'), destination: at('s3://tickets-prod/archives/t.tar') },
      'The source "s3://tickets-prod/incoming-evil/chat.csv" is outside incoming/, where sources of an import here must be (no "." or ".." parts)',
    ],
    [
      'a source under the input prefix by ".."',
      { source: at('s3://tickets-prod/incoming/../archives/t.tar'), destination: at('s3://tickets-prod/archives/t2.tar') },
      'The source "s3://tickets-prod/incoming/../archives/t.tar" is outside incoming/, where sources of an import here must be (no "." or ".." parts)',
    ],
    [
      'a source read from the archives',
      { source: at('s3://tickets-prod/archives/old.csv'), destination: at('s3://tickets-prod/archives/t.tar') },
      'The source "s3://tickets-prod/archives/old.csv" is outside incoming/, where sources of an import here must be (no "." or ".." parts)',
    ],
    [
      'an archive written among the sources',
      { source: at('s3://tickets-prod/incoming/chat.csv'), destination: at('s3://tickets-prod/incoming/t.tar') },
      'The destination "s3://tickets-prod/incoming/t.tar" is outside archives/, where archives and rejects of an import here must be (no "." or ".." parts)',
    ],
    [
      'rejects with a "." part',
      {
        source: at('s3://tickets-prod/incoming/chat.csv'),
        destination: at('s3://tickets-prod/archives/t.tar'),
        rejects: at('s3://tickets-prod/archives/./r.csv'),
      },
      'The rejects "s3://tickets-prod/archives/./r.csv" is outside archives/, where archives and rejects of an import here must be (no "." or ".." parts)',
    ],
    [
      'a local file',
      { source: at('s3://tickets-prod/incoming/chat.csv'), destination: at('/tmp/t.tar') },
      'The destination "/tmp/t.tar" is not in S3; an import here reads and writes s3://tickets-prod only',
    ],
  ])('refuses %s, naming the location and why', (_label, locations, message) => {
    const error = refusal(locations);
    expect(error).toBeInstanceOf(FencedLocationError);
    expect(error).toBeInstanceOf(LocationError);
    expect(error?.message).toBe(message);
  });
});
