import { ConfigError } from './errors.ts';
import type { SecretRef } from './runtime/secrets.ts';

/**
 * How lib/config.ts reads one variable: present or not, required, a URL, a secret or its SSM
 * parameter, a whole number. Each takes the environment it is given and names the variable in the
 * ConfigError it throws; only config.ts hands them the process's environment.
 */
export type Env = Readonly<Record<string, string | undefined>>;

export const present = (env: Env, name: string): string | undefined => {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value;
};

export const required = (env: Env, name: string): string => {
  const value = present(env, name);
  if (value === undefined) throw new ConfigError(name, 'is required but not set');
  return value;
};

/** The URL parser has already normalised the host: IPv4 in dotted decimal, IPv6 in brackets, names lower-case. */
const isLoopbackHost = (hostname: string): boolean =>
  hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);

export const httpUrl = (env: Env, name: string): string => {
  const value = required(env, name);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(name, 'is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(name, 'must be an http(s) URL');
  // Secrets (a client secret, basic credentials, a bearer token) travel on these connections.
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname))
    throw new ConfigError(name, 'must be an https:// URL (http:// only for a loopback host: 127.0.0.0/8, [::1], localhost)');
  // Credentials have their own (secret) variables; inside a URL they would reach error messages and logs.
  if (url.username !== '' || url.password !== '') throw new ConfigError(name, 'must not contain credentials');
  return value.replace(/\/+$/, '');
};

const secret = (env: Env, name: string): SecretRef | undefined => {
  const ssm = present(env, `${name}_SSM`);
  if (ssm !== undefined) {
    // The function's IAM grants `arn:…:parameter<name>`: only a full path names the parameter it may read.
    if (!/^\/\S+$/.test(ssm)) throw new ConfigError(`${name}_SSM`, 'must be the full path of an SSM parameter, starting with "/"');
    return { kind: 'ssm', parameterName: ssm, variable: `${name}_SSM` };
  }
  const value = present(env, name);
  return value === undefined ? undefined : { kind: 'value', value };
};

export const requiredSecret = (env: Env, name: string): SecretRef => {
  const ref = secret(env, name);
  if (ref === undefined) throw new ConfigError(name, `is required but neither ${name} nor ${name}_SSM is set`);
  return ref;
};

/**
 * A whole number of at least `least` (1 or 0), as digits with optional surrounding space, and at most
 * 2^53 − 1: beyond that a double no longer holds it exactly, and a setting must not be rounded.
 */
const wholeNumber = (env: Env, name: string, fallback: number, least: 0 | 1): number => {
  const raw = present(env, name);
  if (raw === undefined) return fallback;
  if (!/^\s*\d+\s*$/.test(raw) || !Number.isSafeInteger(Number(raw)) || Number(raw) < least) {
    throw new ConfigError(name, `must be a whole number from ${least} to ${Number.MAX_SAFE_INTEGER}`);
  }
  return Number(raw);
};

export const positiveInt = (env: Env, name: string, fallback: number): number => wholeNumber(env, name, fallback, 1);
export const nonNegativeInt = (env: Env, name: string, fallback: number): number => wholeNumber(env, name, fallback, 0);

export const optionalHttpUrl = (env: Env, name: string): string | undefined =>
  present(env, name) === undefined ? undefined : httpUrl(env, name);
