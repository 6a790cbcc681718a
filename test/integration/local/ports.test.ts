import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { isPortFree, parsePort } from '../../../scripts/local/ports.ts';
import { freePort } from '../../support/free-port.ts';

describe('parsePort', () => {
  it('uses the fallback when PORT is unset or blank', () => {
    expect(parsePort(undefined, 3000)).toBe(3000);
    expect(parsePort(' ', 3000)).toBe(3000);
  });

  it('accepts a port number with surrounding spaces', () => {
    expect(parsePort(' 8080 ', 3000)).toBe(8080);
  });

  it.each(['0', '65536', '80a', '-1', '3.5'])('refuses %s, naming the variable', (raw) => {
    expect(() => parsePort(raw, 3000)).toThrow(/PORT must be a TCP port/);
  });
});

describe('isPortFree', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
  });

  it('is false while something listens on the port and true once it is closed', async () => {
    const port = await freePort();
    server = createServer();
    await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
    expect(await isPortFree(port)).toBe(false);
    await new Promise<void>((resolve) => server!.close(() => resolve()));
    server = undefined;
    expect(await isPortFree(port)).toBe(true);
  });
});
