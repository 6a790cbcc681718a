import { describe, expect, it } from 'vitest';
import { redactUrl } from '../../../lib/upstream/upstream-call.ts';

describe('redactUrl', () => {
  it('removes user and password', () => {
    expect(redactUrl('https://reader:s3cret@jamf.example.com/api')).toBe('https://jamf.example.com/api');
  });

  it('hides the values of query parameters named as credentials, keeping the others', () => {
    const shown = redactUrl(
      'https://feed.example.com/v2/macos_data_feed.json?token=abc123&X-Amz-Signature=f00d&api_key=k&page=3&section=GENERAL',
    );
    expect(shown).toBe(
      'https://feed.example.com/v2/macos_data_feed.json?token=redacted&X-Amz-Signature=redacted&api_key=redacted&page=3&section=GENERAL',
    );
    for (const secret of ['abc123', 'f00d', '=k&']) expect(shown).not.toContain(secret);
  });

  it('hides the other names credentials go by (pwd, pass, jwt, an OAuth code) and drops a fragment', () => {
    const shown = redactUrl('https://feed.example.com/feed.json?pwd=p1&pass=p2&jwt=p3&code=p4&page=2#access_token=p5');
    expect(shown).toBe('https://feed.example.com/feed.json?pwd=redacted&pass=redacted&jwt=redacted&code=redacted&page=2');
  });

  it('hides every value of a repeated credential parameter', () => {
    expect(redactUrl('http://127.0.0.1/x?auth=one&auth=two')).toBe('http://127.0.0.1/x?auth=redacted');
  });

  it('shows no part of text that is not a URL', () => {
    expect(redactUrl('not a url with password')).toBe('(invalid URL)');
  });
});
