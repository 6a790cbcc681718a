import { note } from './embedded-banner.ts';
import { present } from '../../lib/env-values.ts';
import { demoJamfVersion, localRedisKind, planDefaults, type LocalService } from './embedded-plan.ts';
import { startDemoFeeds, startDemoInventory, startLocalDynamo, startLocalRedis, startLocalS3, type Started } from './embedded-servers.ts';
import type { Env } from './offline-params.ts';

export interface EmbeddedDefaults {
  /** Variables to add to the environment (only ones that were unset). */
  env: Record<string, string>;
  /** One line per default in use, for the banner. */
  notes: string[];
  stop: () => Promise<void>;
}

/** Starts what `planDefaults` asks for, each on a free loopback port; stops them all on `stop()`. */
export const startEmbeddedDefaults = async (
  env: Env,
  needs: ReadonlySet<LocalService>,
  options: { buckets?: readonly string[]; chatSources?: readonly { bucket: string; key: string }[] } = {},
): Promise<EmbeddedDefaults> => {
  const plan = planDefaults(env, needs);
  const stoppers: (() => Promise<void>)[] = [];
  const stop = async () => {
    const results = await Promise.allSettled(
      stoppers
        .splice(0)
        .reverse()
        .map((stopOne) => stopOne()),
    );
    const failed = results.find((result) => result.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
  };
  const overlay: Record<string, string> = { ...plan.values };
  const notes: string[] = [];
  const started: Started = { overlay, notes, stoppers };
  try {
    if (plan.inventory !== undefined) await startDemoInventory(env, plan.inventory, started);
    if (plan.feed || plan.iosFeed || plan.tvosFeed) await startDemoFeeds(plan, started);
    if (plan.users) {
      await startLocalDynamo(started);
    } else if (needs.has('users')) {
      for (const name of ['USERS_TABLE', 'IDEMPOTENCY_TABLE'] as const) {
        const value = plan.values[name];
        if (value !== undefined) notes.push(note(name, `${value} (default name; the table must exist at the configured endpoint)`));
      }
    }
    if (plan.storage) await startLocalS3(options, started);
    if (plan.redis !== undefined) await startLocalRedis(env, plan.redis, started);
    if (needs.has('inventory')) {
      if (plan.values.LATEST_OS_VERSION !== undefined) notes.push(note('LATEST_OS_VERSION', `${plan.values.LATEST_OS_VERSION} (default)`));
      if (plan.values.LATEST_IOS_VERSION !== undefined)
        notes.push(note('LATEST_IOS_VERSION', `${plan.values.LATEST_IOS_VERSION} (default)`));
      if (!present(env, 'REDIS_URL') && plan.redis === undefined)
        notes.push(note('REDIS_URL', 'unset — memory cache only (LOCAL_REDIS=cluster or LOCAL_REDIS=node starts a local Redis)'));
      if (present(env, 'REDIS_URL') && localRedisKind(env) !== undefined)
        notes.push(note('LOCAL_REDIS', `${env.LOCAL_REDIS!.trim()} ignored: REDIS_URL is set`));
      if (plan.inventory === undefined && demoJamfVersion(env) !== undefined)
        notes.push(note('DEMO_JAMF_VERSION', `${env.DEMO_JAMF_VERSION!.trim()} ignored: INVENTORY_URL is set`));
    }
    if (plan.values.AWS_ACCESS_KEY_ID !== undefined) notes.push(note('AWS_ACCESS_KEY_ID', 'test (any key works for the local stores)'));
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }
  return { env: overlay, notes, stop };
};
