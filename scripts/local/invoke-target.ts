import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';
import type { LocalService } from './embedded-plan.ts';

/** What each function needs from the local stack, beyond plain variables. */
const NEEDS: Readonly<Record<string, readonly LocalService[]>> = {
  credentials: [],
  devices: ['inventory'],
  mobileDevices: ['inventory'],
  // It writes the cluster tier: REDIS_URL must name a Redis (no embedded default stands in for one).
  refreshDevices: ['inventory'],
  createUser: ['users'],
  getUser: ['users'],
  importTickets: ['storage'],
};

export interface InvokeTarget {
  name: string;
  /** The TypeScript module of the handler, e.g. `<root>/functions/create-user.ts`. */
  modulePath: string;
  exportName: string;
  timeoutSeconds: number;
  /** The function's memory size in MB, as the handler's context reports it (Lambda's default: 1024). */
  memoryMb: number;
  needs: ReadonlySet<LocalService>;
}

interface Template {
  params?: { default?: Record<string, unknown> | null } | null;
  provider?: { timeout?: number | string; memorySize?: number | string };
  functions?: Record<string, { handler?: string; timeout?: number | string; memorySize?: number | string } | null>;
}

/** A number of the template, or the default of the stage parameter `${param:name}` it names. */
const numberOf = (template: Template, value: number | string | undefined): number | undefined => {
  const name = typeof value === 'string' ? /^\$\{param:(\w+)\}$/.exec(value.trim())?.[1] : undefined;
  const resolved = name === undefined ? value : template.params?.default?.[name];
  const number = Number(resolved);
  return resolved === undefined || resolved === '' || !Number.isFinite(number) ? undefined : number;
};

/** Resolves a function name of serverless.yml to its handler module; undefined for an unknown name. */
export const invokeTarget = (root: string, templateText: string, name: string): InvokeTarget | undefined => {
  const template = (parse(templateText, { logLevel: 'silent' }) ?? {}) as Template;
  const fn = Object.hasOwn(template.functions ?? {}, name) ? template.functions?.[name] : undefined;
  const handler = fn?.handler;
  if (handler === undefined) return undefined;
  const dot = handler.lastIndexOf('.');
  return {
    name,
    modulePath: join(root, `${handler.slice(0, dot)}.ts`),
    exportName: handler.slice(dot + 1),
    timeoutSeconds: numberOf(template, fn?.timeout) ?? numberOf(template, template.provider?.timeout) ?? 29,
    memoryMb: numberOf(template, fn?.memorySize) ?? numberOf(template, template.provider?.memorySize) ?? 1024,
    needs: new Set(NEEDS[name] ?? []),
  };
};

export const functionNames = (templateText: string): string[] =>
  Object.keys(((parse(templateText, { logLevel: 'silent' }) ?? {}) as Template).functions ?? {});

/** An event file as given, or relative to `events/` or `events/<function>/` (`.json` optional). */
export const findEventFile = (root: string, functionName: string, given: string): string | undefined => {
  const candidates = [resolve(given), join(root, 'events', given), join(root, 'events', functionName, given)];
  return candidates.flatMap((path) => [path, `${path}.json`]).find((path) => statSync(path, { throwIfNoEntry: false })?.isFile() === true);
};

/** The sample events of a function: the names under `events/<function>/`, without `.json`. */
export const sampleEventNames = (root: string, functionName: string): string[] => {
  const folder = join(root, 'events', functionName);
  if (statSync(folder, { throwIfNoEntry: false })?.isDirectory() !== true) return [];
  return readdirSync(folder)
    .filter((file) => file.endsWith('.json'))
    .map((file) => file.slice(0, -'.json'.length))
    .sort();
};

/** The S3 buckets and the source object an import event names (the local store creates and seeds them). */
export const s3LocationsOf = (event: unknown): { buckets: string[]; sources: { bucket: string; key: string }[] } => {
  const record = (typeof event === 'object' && event !== null ? event : {}) as Record<string, unknown>;
  const parseS3 = (value: unknown) => {
    const match = typeof value === 'string' ? /^s3:\/\/([^/]+)\/(.+)$/i.exec(value.trim()) : null;
    return match ? { bucket: match[1]!, key: match[2]! } : undefined;
  };
  const source = parseS3(record.source);
  const destination = parseS3(record.destination);
  return {
    buckets: [...new Set([source?.bucket, destination?.bucket].filter((b): b is string => b !== undefined))],
    sources: source ? [source] : [],
  };
};
