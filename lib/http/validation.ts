import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule, { type FormatsPlugin } from 'ajv-formats';

// ajv-formats ships CommonJS with a default export; under nodenext it arrives as the module object.
const addFormats = ((addFormatsModule as unknown as { default?: FormatsPlugin }).default ??
  addFormatsModule) as FormatsPlugin;

/**
 * Shared AJV settings: every failure reported, nothing coerced or defaulted behind the caller's back.
 * The schemas are constants of the code, checked by strict mode and by their tests, so validating
 * them against the meta-schema at every cold start (~25 ms measured) buys nothing.
 */
export const makeAjv = (): Ajv => {
  const ajv = new Ajv({
    // Source kept so scripts/validators.ts can write the compiled validators out as modules.
    code: { source: true, esm: true },
    allErrors: true,
    strict: true,
    validateSchema: false,
    coerceTypes: false,
    useDefaults: false,
    allowUnionTypes: true,
  });
  addFormats(ajv);
  return ajv;
};

/** A body schema as a schema of the whole event, the shape `@middy/validator` validates. */
export const wrapBodySchema = (bodySchema: object): object => ({
  type: 'object',
  required: ['body'],
  properties: { body: bodySchema },
});

/**
 * Compiles a schema for the request body into a validator of the whole event. Error paths are later
 * reported relative to the body. The functions use the same validators generated ahead of time
 * (lib/validators/, scripts/validators.ts); this compiles them at run time for the tests.
 */
export const compileBodyValidator = (ajv: Ajv, bodySchema: object): ValidateFunction => ajv.compile(wrapBodySchema(bodySchema));
