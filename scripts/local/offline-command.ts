import { join } from 'node:path';
import type { Env } from './offline-params.ts';

/** Every configuration variable (docs/configuration.md), for the banner. */
export const CONFIGURATION_VARIABLES = [
  'INVENTORY_URL',
  'INVENTORY_CLIENT_ID',
  'INVENTORY_CLIENT_SECRET',
  'INVENTORY_CLIENT_SECRET_SSM',
  'INVENTORY_USERNAME',
  'INVENTORY_PASSWORD',
  'INVENTORY_PASSWORD_SSM',
  'LATEST_OS_VERSION',
  'LATEST_OS_FEED_URL',
  'LATEST_OS_FEED_TTL_SECONDS',
  'LATEST_IOS_VERSION',
  'LATEST_IOS_FEED_URL',
  'LATEST_TVOS_VERSION',
  'LATEST_TVOS_FEED_URL',
  'PATCH_SLA_EXPLOITED_DAYS',
  'PATCH_SLA_SECURITY_DAYS',
  'PATCH_SLA_DAYS',
  'DEVICES_CACHE_TTL_SECONDS',
  'DEVICES_CACHE_STALE_SECONDS',
  'DEVICES_FULL_REFRESH_SECONDS',
  'REDIS_URL',
  'REDIS_CLUSTER',
  'REDIS_TLS_CA_FILE',
  'REDIS_PASSWORD_SSM',
  'USERS_TABLE',
  'USER_EMAIL_PATTERN',
  'IDEMPOTENCY_TABLE',
  'TICKETING_URL',
  'TICKETING_USERNAME',
  'TICKETING_PASSWORD',
  'TICKETING_PASSWORD_SSM',
  'TICKETING_PAGINATION',
  'IMPORT_BUCKET',
  'IMPORT_INPUT_PREFIX',
  'IMPORT_ARCHIVE_PREFIX',
  'IMPORT_BUCKET_OWNER',
  'AWS_ENDPOINT_URL',
  'AWS_ENDPOINT_URL_S3',
  'AWS_ENDPOINT_URL_DYNAMODB',
] as const;

export interface OfflineCommand {
  executable: string;
  args: string[];
  env: Record<string, string | undefined>;
}

/**
 * Stage parameters the local stack sets itself (no value of the user's): the scheduled device refresh
 * runs (every minute, through serverless-offline's scheduler) only where a Redis cluster is
 * configured to keep warm.
 */
const localParams = (env: Env): string[] => ['--param', `devicesRefreshEnabled=${(env.REDIS_URL ?? '').trim() === '' ? 'false' : 'true'}`];

/**
 * The `osls offline` command line, run in the stack's private copy of the service (shadow-service.ts).
 * Port 0 lets the OS pick the emulator's Lambda, WebSocket and ALB ports, so only `port` is fixed and
 * two stacks run side by side. `--localEnvironment` hands the handlers this process's environment,
 * which is how secrets reach them without entering the template; the values the template passes on
 * are written into that copy's serverless.yml (offline-params.ts), so none of them is on this command
 * line. Node 24 (this process's own) runs osls.
 */
export const offlineCommand = (options: { root: string; port: number; env: Env }): OfflineCommand => ({
  executable: process.execPath,
  args: [
    join(options.root, 'node_modules', 'osls', 'bin', 'serverless.js'),
    'offline',
    'start',
    '--host',
    '127.0.0.1',
    '--httpPort',
    String(options.port),
    '--lambdaPort',
    '0',
    '--websocketPort',
    '0',
    '--albPort',
    '0',
    '--noAuth',
    '--noPrependStageInUrl',
    '--localEnvironment',
    ...localParams(options.env),
  ],
  env: {
    // Lambda sets this for an on-demand function (Powertools' `cold_start` needs it); serverless-offline
    // sets the other AWS_LAMBDA_* variables itself, not this one.
    AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
    ...options.env,
    // Unattended: no prompts, telemetry or update notices from the framework.
    CI: 'true',
    SLS_TELEMETRY_DISABLED: '1',
    SLS_TRACKING_DISABLED: '1',
    SLS_NOTIFICATIONS_MODE: 'off',
    SLS_INTERACTIVE_SETUP_DISABLE: '1',
  },
});
