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
  /** The module's exports: each name and the id of the schema it validates. */
  exports: Record<string, string>,
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
  /** Each exported validator's schema, by its export's name (`validate`; a list's query and its summary's share one module). */
  schemas: Readonly<Record<string, object>>;
  ajv: () => Ajv;
  /** `body`: validates the event's `{ body }`, as `@middy/validator` runs it; `query`: the typed query itself. */
  validates: 'body' | 'query';
}

export const VALIDATOR_MODULES: readonly ValidatorModule[] = [
  { file: 'lib/credentials/credentials.generated.ts', schemas: { validate: credentialsSchema }, ajv: makeAjv, validates: 'body' },
  {
    file: 'lib/users/user-strict.generated.ts',
    schemas: { validate: userSchema('strict') },
    ajv: () => addUserKeywords(makeAjv()),
    validates: 'body',
  },
  {
    file: 'lib/users/user-off.generated.ts',
    schemas: { validate: userSchema('off') },
    ajv: () => addUserKeywords(makeAjv()),
    validates: 'body',
  },
  {
    file: 'lib/devices/device-query.generated.ts',
    schemas: { validate: deviceQuerySchema, validateSummary: deviceSummaryQuerySchema },
    ajv: () => addInstantKeyword(makeAjv()),
    validates: 'query',
  },
  {
    file: 'lib/devices/mobile-device-query.generated.ts',
    schemas: { validate: mobileDeviceQuerySchema, validateSummary: mobileDeviceSummaryQuerySchema },
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
const EXPORT_LINE = /export const (\w+) = (\w+);/g;
const STRICT = '"use strict";';

/** The TypeScript source of one generated validator module. */
export const validatorSource = ({ schemas, ajv, validates }: ValidatorModule): string => {
  const instance = ajv();
  const names = Object.keys(schemas);
  for (const name of names) instance.addSchema((validates === 'body' ? wrapBodySchema(schemas[name]!) : schemas[name]) as AnySchema, name);
  const code = standaloneCode(instance, Object.fromEntries(names.map((name) => [name, name])));
  if (!code.startsWith(STRICT)) throw new Error('unexpected standalone code: not strict');
  const exported: string[] = [];
  const imports: string[] = [];
  const body = code
    .slice(STRICT.length)
    .replace(EXPORT_LINE, (_line, name: string, validator: string) => {
      exported.push(`export const ${name} = ${validator} as unknown as ValidateFunction;`);
      return '';
    })
    .replace(REQUIRE_LINE, (_line, local: string, specifier: string, member: string) => {
      const target = REQUIRE_TARGETS[`${specifier}#${member}`];
      if (target === undefined) throw new Error(`generated code requires ${specifier}.${member}: map it in REQUIRE_TARGETS`);
      imports.push(`import { ${target.name} as ${local} } from '${target.from}';`);
      return '';
    });
  if (exported.length !== names.length) throw new Error(`unexpected standalone code: ${exported.length} exports for ${names.join(', ')}`);
  return [
    '// @ts-nocheck -- generated by scripts/generate-validators.ts (npm run generate:validators); do not edit.',
    "import type { ValidateFunction } from 'ajv';",
    ...imports,
    body,
    ...exported,
    '',
  ].join('\n');
};
