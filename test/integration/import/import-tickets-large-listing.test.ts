import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { handler as ImportTicketsHandler } from '../../../functions/import-tickets.ts';
import { LOCAL_AWS_ENV } from '../../../scripts/local/local-aws.ts';
import { createBucket, localS3Client, startS3Server, type S3Server } from '../../../scripts/local/s3-server.ts';
import { captureStdout } from '../../support/capture-logs.ts';
import { chatCsv, chatRow, readArchive } from '../../support/chat-import.ts';
import { generateTicketingUsers, startFakeTicketing, type FakeTicketing } from '../../support/fake-ticketing.ts';
import { lambdaContext } from '../../support/http-events.ts';

const BUCKET = 'import-large-listing';
const MAX_ID = '9223372036854775807';

let handler: typeof ImportTicketsHandler;
let s3Server: S3Server;
let ticketing: FakeTicketing;
let s3: S3Client;
const savedEnv = { ...process.env };

beforeAll(async () => {
  s3Server = await startS3Server();
  await createBucket({ endpoint: s3Server.endpoint, bucket: BUCKET });
  // Past 10,000 users: Zendesk refuses page 101 by number, so the listing is read again by cursor.
  const users = generateTicketingUsers(10_050);
  users[10_030] = { id: MAX_ID, email: 'person.0@example.com', name: 'Person Zero' };
  ticketing = await startFakeTicketing({ users });
  for (const name of Object.keys(process.env)) if (name.startsWith('TICKETING_')) delete process.env[name];
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_S3: s3Server.endpoint,
    ...LOCAL_AWS_ENV,
    TICKETING_URL: ticketing.url,
    TICKETING_USERNAME: ticketing.username,
    TICKETING_PASSWORD: ticketing.password,
  });
  s3 = localS3Client(s3Server.endpoint);
  ({ handler } = await import('../../../functions/import-tickets.ts'));
});
afterAll(async () => {
  s3.destroy();
  await ticketing.close();
  await s3Server.stop();
  process.env = savedEnv;
});

describe('importTickets handler: a listing past 10,000 users and a .tar.gz destination', () => {
  it('logs the switch to cursor paging once, resolves users from the cursor read and writes a gzip archive to S3', async () => {
    await s3.send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key: 'input/chat.csv',
        Body: chatCsv(Array.from({ length: 30 }, (_unused, n) => chatRow(n))),
      }),
    );
    const logs = captureStdout();
    let summary;
    try {
      summary = await handler(
        { source: `s3://${BUCKET}/input/chat.csv`, destination: `s3://${BUCKET}/output/tickets.tar.gz` },
        lambdaContext(),
      );
    } finally {
      logs.restore();
    }
    expect(summary).toMatchObject({ rows: 30, users_matched: 1, user_resolution: 'destination', compression: 'gzip' });
    const switches = logs.errorLines().filter((line) => line.message === 'user listing switched to cursor paging');
    expect(switches).toEqual([
      expect.objectContaining({
        level: 'WARN',
        detail:
          'User listing refused page 101 (HTTP 400: no page-number paging past 10,000 users); reading it again from the start with cursor paging (TICKETING_PAGINATION=cursor starts there)',
      }),
    ]);
    expect(logs.lines().find((line) => line.message === 'import finished')?.summary).toMatchObject({ compression: 'gzip' });
    const object = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'output/tickets.tar.gz' }));
    expect(object.ContentType).toBe('application/gzip');
    const [entry] = await readArchive(gunzipSync(await object.Body!.transformToByteArray()));
    expect(entry?.text).toContain(`{"id":${MAX_ID},"name":"Person 0","email":"Person.0@Example.com"}`);
    expect(entry?.text).toContain(`"author_id":${MAX_ID}`);
  });
});
