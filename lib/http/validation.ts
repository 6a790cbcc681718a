import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule, { type FormatsPlugin } from 'ajv-formats';
import type { ErrorDetail } from '../errors.ts';

// ajv-formats ships CommonJS with a default export; under nodenext it arrives as the module object.
const addFormats = ((addFormatsModule as unknown as { default?: FormatsPlugin }).default ??
  addFormatsModule) as FormatsPlugin;

/** Shared AJV settings: every failure reported, nothing coerced or defaulted behind the caller's back. */
export const makeAjv = (): Ajv => {
  const ajv = new Ajv({ allErrors: true, strict: true, coerceTypes: false, useDefaults: false, allowUnionTypes: true });
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

const BODY_PREFIX = /^\/body/;

/** AJV errors → `{ path, message }` details naming the field (JSON Pointer) and the rule that failed. */
export const toErrorDetails = (errors: readonly ErrorObject[] | null | undefined): ErrorDetail[] =>
  (errors ?? []).map((error) => {
    let path = error.instancePath.replace(BODY_PREFIX, '');
    const params = error.params as Record<string, unknown>;
    if (error.keyword === 'required') path += `/${String(params.missingProperty)}`;
    if (error.keyword === 'additionalProperties') path += `/${String(params.additionalProperty)}`;
    const message =
      error.keyword === 'additionalProperties'
        ? 'must NOT have additional properties'
        : (error.message ?? `failed rule ${error.keyword}`);
    return { path: path === '' ? '/' : path, message };
  });
