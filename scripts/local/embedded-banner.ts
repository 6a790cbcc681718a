import { redactUrl } from '../../lib/upstream/upstream-call.ts';
import { present } from '../../lib/env-values.ts';
import type { Env } from './offline-params.ts';

const SECRET_VARIABLES = new Set(['INVENTORY_CLIENT_SECRET', 'INVENTORY_PASSWORD', 'TICKETING_PASSWORD']);

/** One banner line: the variable's name, then what it is set to. */
export const note = (variable: string, text: string): string => `  ${variable.padEnd(26)} ${text}`;

/** A variable's value as the banner shows it: a URL without its credentials (`user:password@`, `?token=`). */
export const shown = (name: string, value: string): string => {
  if (SECRET_VARIABLES.has(name)) return '(set)';
  // `…_URL` and the SDK's `AWS_ENDPOINT_URL_<SERVICE>`.
  if (!/_URL(_|$)/.test(name)) return value;
  // `user:pw@host` parses too (as scheme `user:`): only a URL with a host is one.
  if (URL.canParse(value) && new URL(value).host !== '') return redactUrl(value);
  // A word such as `demo` is shown; other text that is no URL may be one with a password it broke.
  return /^[\w.-]*$/.test(value) ? value : '(not a valid URL)';
};

/** The banner's line for a variable that came from the environment (never a secret, nor one inside a URL). */
export const describeConfigured = (env: Env, names: readonly string[]): string[] =>
  names.filter((name) => present(env, name)).map((name) => note(name, `${shown(name, env[name]!)} (from the environment)`));
