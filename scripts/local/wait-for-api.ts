import { setTimeout as sleep } from 'node:timers/promises';

/** A path no route owns: the API's `$default` route answers it with its own 404 envelope. */
const READINESS_PATH = '/__local/ready';

const answersWithEnvelope = async (baseUrl: string): Promise<boolean> => {
  try {
    const response = await fetch(`${baseUrl}${READINESS_PATH}`, { signal: AbortSignal.timeout(5_000) });
    const body = (await response.json()) as { error?: { status?: unknown } };
    return response.status === 404 && body.error?.status === 404;
  } catch {
    return false;
  }
};

/**
 * Polls until the API answers through a real handler (so bundling and the catch-all route work),
 * the process dies, or `timeoutMs` passes.
 */
export const waitForApi = async (
  baseUrl: string,
  options: { timeoutMs: number; intervalMs?: number; gaveUp: () => boolean },
): Promise<'ready' | 'timeout' | 'gave-up'> => {
  const deadline = Date.now() + options.timeoutMs;
  const interval = options.intervalMs ?? 500;
  for (let attempt = 0; attempt < 100_000 && Date.now() < deadline; attempt += 1) {
    if (options.gaveUp()) return 'gave-up';
    if (await answersWithEnvelope(baseUrl)) return 'ready';
    await sleep(interval);
  }
  return 'timeout';
};
