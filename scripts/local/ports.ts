import { createServer } from 'node:net';

export const LOOPBACK = '127.0.0.1';

/** True when nothing listens on `host:port` (checked by binding it for a moment). */
export const isPortFree = (port: number, host = LOOPBACK): Promise<boolean> =>
  new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') resolve(false);
      else if (error.code === 'EACCES') reject(new Error(`not allowed to listen on ${host}:${port} (a privileged port?)`));
      else reject(error);
    });
    probe.listen({ port, host, exclusive: true }, () => {
      probe.close(() => resolve(true));
    });
  });

/** Parses a TCP port as given in an environment variable; anything else is an error naming it. */
export const parsePort = (raw: string | undefined, fallback: number, variable = 'PORT'): number => {
  if (raw === undefined || raw.trim() === '') return fallback;
  const port = Number(raw.trim());
  if (!/^\d+$/.test(raw.trim()) || port < 1 || port > 65_535) {
    throw new Error(`${variable} must be a TCP port between 1 and 65535, got "${raw}"`);
  }
  return port;
};
