import { parse } from 'yaml';

export type Env = Readonly<Record<string, string | undefined>>;

const PARAM_REFERENCE = /^\$\{param:([A-Za-z0-9_-]+)\s*(?:,.*)?\}$/;

type EnvironmentBlock = Record<string, unknown> | undefined;
interface Template {
  provider?: { environment?: EnvironmentBlock };
  functions?: Record<string, { environment?: EnvironmentBlock } | null>;
}

/**
 * Reads which stage parameter feeds each Lambda environment variable (`VAR: ${param:name}`) from
 * serverless.yml, so the local stack follows the template instead of a copy of it.
 */
export const paramVariables = (templateText: string): Map<string, string> => {
  // CloudFormation tags (!Ref, !GetAtt) are irrelevant here; parse them as plain values, silently.
  const template = (parse(templateText, { logLevel: 'silent' }) ?? {}) as Template;
  const blocks = [template.provider?.environment, ...Object.values(template.functions ?? {}).map((fn) => fn?.environment)];
  const mapping = new Map<string, string>();
  for (const block of blocks) {
    for (const [variable, value] of Object.entries(block ?? {})) {
      const name = typeof value === 'string' ? PARAM_REFERENCE.exec(value.trim())?.[1] : undefined;
      if (name !== undefined) mapping.set(variable, name);
    }
  }
  return mapping;
};

/**
 * serverless-offline gives each function `{...process.env, ...provider.environment,
 * ...function.environment}`, and the template's parameters default to '' — so a value only reaches
 * a handler through the template as `--param name=value`. Only variables the template names appear
 * here, and the template names no secret variable (only `<SECRET>_SSM`). A credential written into
 * a URL (`REDIS_URL`'s password, a feed's `?token=`) does reach the command line, where this
 * machine's process list shows it (docs/local-stack.md says so).
 */
export const paramArguments = (mapping: ReadonlyMap<string, string>, env: Env): string[] =>
  [...mapping]
    .filter(([variable]) => (env[variable] ?? '').trim() !== '')
    .sort(([a], [b]) => a.localeCompare(b))
    .flatMap(([variable, name]) => ['--param', `${name}=${env[variable]}`]);
