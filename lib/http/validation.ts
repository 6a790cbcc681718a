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

/**
 * Compiles a schema for the request body into a validator of the whole event, the shape
 * `@middy/validator` expects. Error paths are later reported relative to the body.
 */
export const compileBodyValidator = (ajv: Ajv, bodySchema: object): ValidateFunction =>
  ajv.compile({
    type: 'object',
    required: ['body'],
    properties: { body: bodySchema },
  });
