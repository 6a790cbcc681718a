import { isMap, isScalar, parse, parseDocument } from 'yaml';

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
 * a handler through the template, as its stage parameter. Each variable the template names that is
 * set (not blank) is written into a copy of the template, as that parameter in `params.default` and
 * in every stage's block there, so it wins as `--param` would. The copy lives in the stack's private
 * folder (shadow-service.ts), never on a command line: a credential written into a URL (`REDIS_URL`'s
 * password, a feed's `?token=`) stays out of this machine's process list. The template names no
 * secret variable itself (only `<SECRET>_SSM`).
 */
export const templateWithParams = (templateText: string, mapping: ReadonlyMap<string, string>, env: Env): string => {
  const document = parseDocument(templateText, { logLevel: 'silent' });
  const params = document.get('params');
  const stages = isMap(params) ? params.items.map((item) => (isScalar(item.key) ? String(item.key.value) : String(item.key))) : [];
  if (!stages.includes('default')) stages.unshift('default');
  for (const [variable, name] of mapping) {
    const value = env[variable];
    if (value === undefined || value.trim() === '') continue;
    for (const stage of stages) document.setIn(['params', stage, name], value);
  }
  // CloudFormation tags (!Ref) are kept as written; no line folding.
  return document.toString({ lineWidth: 0, flowCollectionPadding: false });
};
