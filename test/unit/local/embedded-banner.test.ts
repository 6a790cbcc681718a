import { describe, expect, it } from 'vitest';
import { describeConfigured } from '../../../scripts/local/embedded-banner.ts';

describe('describeConfigured (the banner lines for variables from the environment)', () => {
  it('shows non-secret values and only "(set)" for secrets', () => {
    const lines = describeConfigured(
      { INVENTORY_URL: 'https://jamf.example.com', INVENTORY_CLIENT_SECRET: 'hunter2', TICKETING_PASSWORD: 'pw' },
      ['INVENTORY_URL', 'INVENTORY_CLIENT_SECRET', 'TICKETING_PASSWORD', 'REDIS_URL'],
    );
    expect(lines).toHaveLength(3);
    expect(lines.join('\n')).toContain('https://jamf.example.com');
    expect(lines.join('\n')).not.toMatch(/hunter2|\bpw\b/);
  });

  it('shows a URL without the credentials it carries (user:password@, a ?token=)', () => {
    const lines = describeConfigured(
      {
        REDIS_URL: 'redis://:cluster-pw@127.0.0.1:6390',
        LATEST_OS_FEED_URL: 'https://sofa.example.com/feed.json?token=feed-secret',
        INVENTORY_URL: 'demo-not-a-url',
      },
      ['REDIS_URL', 'LATEST_OS_FEED_URL', 'INVENTORY_URL'],
    ).join('\n');
    expect(lines).not.toMatch(/cluster-pw|feed-secret/);
    expect(lines).toContain('redis://127.0.0.1:6390');
    expect(lines).toContain('https://sofa.example.com/feed.json?token=redacted');
    expect(lines).toContain('demo-not-a-url');
    // A password with a `/` in it breaks the URL: nothing of it is shown.
    const broken = describeConfigured({ REDIS_URL: 'redis://:pa/ss@host:6379' }, ['REDIS_URL']).join('\n');
    expect(broken).toContain('(not a valid URL)');
    expect(broken).not.toContain('pa/ss');
    // Without a scheme `user:password@host` parses as a URL of scheme `user:`, with no host: not shown.
    const schemeless = describeConfigured({ INVENTORY_URL: 'admin:hunter2@jamf.example.com' }, ['INVENTORY_URL']).join('\n');
    expect(schemeless).toContain('(not a valid URL)');
    expect(schemeless).not.toContain('hunter2');
  });

  it('treats the per-service endpoint variables (AWS_ENDPOINT_URL_S3, …) as URLs too', () => {
    const lines = describeConfigured(
      {
        AWS_ENDPOINT_URL: 'http://all:every-pw@127.0.0.1:4566',
        AWS_ENDPOINT_URL_S3: 'http://minio:s3-pw@127.0.0.1:9000',
        AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:8000/?token=ddb-secret',
      },
      ['AWS_ENDPOINT_URL', 'AWS_ENDPOINT_URL_S3', 'AWS_ENDPOINT_URL_DYNAMODB'],
    ).join('\n');
    expect(lines).not.toMatch(/every-pw|s3-pw|minio|ddb-secret/);
    expect(lines).toContain('http://127.0.0.1:4566/');
    expect(lines).toContain('http://127.0.0.1:9000/');
    expect(lines).toContain('http://127.0.0.1:8000/?token=redacted');
  });
});
