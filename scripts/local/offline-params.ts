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
  const set = [...mapping]
    // osls drops trailing white space from a `--param` value (a deployment's too): so does the copy.
    .map(([variable, name]) => [name, env[variable]?.trimEnd() ?? ''] as const)
    .filter(([, value]) => value.trim() !== '');
  if (set.length === 0) return templateText;
  // An empty `params:` (or `default:`) is null in YAML: a block is made for it.
  let params = document.get('params');
  if (params == null) document.set('params', (params = document.createNode({})));
  if (!isMap(params))
    throw new Error('serverless.yml: `params` is not a block of stage parameters, so the local stack cannot set its values there');
  if (!params.has('default')) params.set('default', document.createNode({}));
  for (const stage of params.items) {
    // The stage's own key node is kept (a stage named `1` stays one key, not a second "1").
    if (stage.value == null || (isScalar(stage.value) && stage.value.value == null)) stage.value = document.createNode({});
    if (!isMap(stage.value)) {
      throw new Error(
        `serverless.yml: params.${String(isScalar(stage.key) ? stage.key.value : stage.key)} is not a block of stage parameters, so the local stack cannot set its values there`,
      );
    }
    for (const [name, value] of set) stage.value.set(name, value);
  }
  // CloudFormation tags (!Ref) are kept as written; no line folding.
  return document.toString({ lineWidth: 0, flowCollectionPadding: false });
};
