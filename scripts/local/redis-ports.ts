import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isPortFree } from './ports.ts';

/** Redis's cluster bus listens on the client (here TLS) port + 10000. */
export const BUS_PORT_OFFSET = 10_000;

/** The first port of the kernel's range for outgoing connections (Linux), so a listener stays below it. */
const ephemeralLow = (): number => {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 0 ? low : 32_768;
  } catch {
    return 32_768;
  }
};

/** Ports this process has handed out and not released (several clusters may start at once). */
const claimed = new Set<number>();

/**
 * A free port P (with `busPort`, P + 10000, its cluster bus, free too), below the range the OS picks
 * outgoing connections' ports from (so no connection takes one between the check and the bind), and
 * claimed in this process until `release`. The OS cannot pick such a pair for us, hence the random
 * tries; a port taken after the check shows as the node failing to start (the caller tries again).
 */
export const claimPorts = async (busPort: boolean): Promise<{ port: number; release: () => void }> => {
  const low = 10_000;
  const high = Math.max(ephemeralLow(), low + BUS_PORT_OFFSET + 2_000) - BUS_PORT_OFFSET - 1;
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const port = randomInt(low, Math.min(high, 65_535 - BUS_PORT_OFFSET) + 1);
    const pair = busPort ? [port, port + BUS_PORT_OFFSET] : [port];
    if (pair.some((candidate) => claimed.has(candidate))) continue;
    for (const candidate of pair) claimed.add(candidate);
    const release = () => {
      for (const candidate of pair) claimed.delete(candidate);
    };
    if ((await isPortFree(port)) && (!busPort || (await isPortFree(port + BUS_PORT_OFFSET)))) return { port, release };
    release();
  }
  throw new Error(`found no free loopback port${busPort ? ` P with P + ${BUS_PORT_OFFSET} free too` : ''} after 200 tries`);
};
