import type { Ajv, AnySchema } from 'ajv';
import standaloneModule from 'ajv/dist/standalone/index.js';
import { Ajv as AjvClass } from 'ajv';
import addFormatsModule, { type FormatsPlugin } from 'ajv-formats';
import { credentialsSchema } from '../lib/credentials/credentials-schema.ts';
import {
  addInstantKeyword,
  deviceQuerySchema,
  deviceSummaryQuerySchema,
  INSTANT_CHECK_MODULE,
  mobileDeviceQuerySchema,
  mobileDeviceSummaryQuerySchema,
} from '../lib/devices/device-query-schema.ts';
import { addUserKeywords, EMAIL_CHECK_MODULE, PLAIN_TEXT_CHECK_MODULE, userSchema } from '../lib/users/user-schema.ts';

// ajv's standalone entry is CommonJS with a default export; under nodenext it arrives as the module object.
const standaloneCode = ((standaloneModule as unknown as { default?: typeof standaloneModule }).default ?? standaloneModule) as unknown as (
  ajv: Ajv,
  validate: ReturnType<Ajv['compile']>,
) => string;

// ajv-formats ships CommonJS with a default export; under nodenext it arrives as the module object.
const addFormats = ((addFormatsModule as unknown as { default?: FormatsPlugin }).default ?? addFormatsModule) as FormatsPlugin;

/**
 * The AJV settings of every validator: every failure reported, nothing coerced or defaulted behind
 * the caller's back, strict schemas, and the source kept so the compiled code can be written out.
 */
const makeAjv = (): Ajv =>
  addFormats(
    new AjvClass({
      code: { source: true, esm: true },
      allErrors: true,
      strict: true,
      validateSchema: false,
      coerceTypes: false,
      useDefaults: false,
      allowUnionTypes: true,
    }),
  );

/** A body schema as a schema of the whole event, the shape `@middy/validator` validates. */
const wrapBodySchema = (bodySchema: object): object => ({
  type: 'object',
  required: ['body'],
  properties: { body: bodySchema },
});

/**
 * The request-body validators, generated ahead of time (AJV "standalone" code) next to their schemas,
 * so no function bundle carries AJV or compiles a schema at cold start. The schemas stay the source
 * of truth: `npm run generate:validators` rewrites the files, and a test fails when one is stale.
 */
interface ValidatorModule {
  file: string;
  schema: object;
  ajv: () => Ajv;
  /** `body`: validates the event's `{ body }`, as `@middy/validator` runs it; `query`: the typed query itself. */
  validates: 'body' | 'query';
}

export const VALIDATOR_MODULES: readonly ValidatorModule[] = [
  { file: 'lib/credentials/credentials.generated.ts', schema: credentialsSchema, ajv: makeAjv, validates: 'body' },
  { file: 'lib/users/user-strict.generated.ts', schema: userSchema('strict'), ajv: () => addUserKeywords(makeAjv()), validates: 'body' },
  { file: 'lib/users/user-off.generated.ts', schema: userSchema('off'), ajv: () => addUserKeywords(makeAjv()), validates: 'body' },
  { file: 'lib/devices/device-query.generated.ts', schema: deviceQuerySchema, ajv: () => addInstantKeyword(makeAjv()), validates: 'query' },
  {
    file: 'lib/devices/mobile-device-query.generated.ts',
    schema: mobileDeviceQuerySchema,
    ajv: () => addInstantKeyword(makeAjv()),
    validates: 'query',
  },
  {
    file: 'lib/devices/device-summary-query.generated.ts',
    schema: deviceSummaryQuerySchema,
    ajv: () => addInstantKeyword(makeAjv()),
    validates: 'query',
  },
  {
    file: 'lib/devices/mobile-device-summary-query.generated.ts',
    schema: mobileDeviceSummaryQuerySchema,
    ajv: () => addInstantKeyword(makeAjv()),
    validates: 'query',
  },
];

/** Where a `require()` of the generated code is served from instead: a module of lib/, as a named import. */
const REQUIRE_TARGETS: Record<string, { from: string; name: string }> = {
  'ajv/dist/runtime/ucs2length#default': { from: '../validators/ucs2length.ts', name: 'ucs2length' },
  [`${EMAIL_CHECK_MODULE}#meetsEmailRule`]: { from: EMAIL_CHECK_MODULE, name: 'meetsEmailRule' },
  [`${INSTANT_CHECK_MODULE}#isInstant`]: { from: INSTANT_CHECK_MODULE, name: 'isInstant' },
  [`${PLAIN_TEXT_CHECK_MODULE}#isPlainText`]: { from: PLAIN_TEXT_CHECK_MODULE, name: 'isPlainText' },
};

const REQUIRE_LINE = /const (\w+) = require\("([^"]+)"\)\.(\w+);/g;
const EXPORTS = /^"use strict";export const validate = (\w+);export default \w+;/;

/** The TypeScript source of one generated validator module. */
export const validatorSource = ({ schema, ajv, validates }: ValidatorModule): string => {
  const instance = ajv();
  const code = standaloneCode(instance, instance.compile((validates === 'body' ? wrapBodySchema(schema) : schema) as AnySchema));
  const exported = EXPORTS.exec(code);
  if (!exported) throw new Error('unexpected standalone code: no validate export');
  const imports: string[] = [];
  const body = code.slice(exported[0].length).replace(REQUIRE_LINE, (_line, local: string, specifier: string, member: string) => {
    const target = REQUIRE_TARGETS[`${specifier}#${member}`];
    if (target === undefined) throw new Error(`generated code requires ${specifier}.${member}: map it in REQUIRE_TARGETS`);
    imports.push(`import { ${target.name} as ${local} } from '${target.from}';`);
    return '';
  });
  return [
    '// @ts-nocheck -- generated by scripts/generate-validators.ts (npm run generate:validators); do not edit.',
    "import type { ValidateFunction } from 'ajv';",
    ...imports,
    body,
    `export const validate = ${exported[1]} as unknown as ValidateFunction;`,
    '',
  ].join('\n');
};
