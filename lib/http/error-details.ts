import type { ErrorObject } from 'ajv';
import type { ErrorDetail } from '../errors.ts';

// Only AJV's error type is used here: the validators are generated standalone code
// (scripts/generate-validators.ts), so no function bundles AJV itself.
const BODY_PREFIX = /^\/body/;

/** AJV errors → `{ path, message }` details naming the field (JSON Pointer) and the rule that failed. */
export const toErrorDetails = (errors: readonly ErrorObject[] | null | undefined): ErrorDetail[] =>
  (errors ?? []).map((error) => {
    let path = error.instancePath.replace(BODY_PREFIX, '');
    const params = error.params as Record<string, unknown>;
    if (error.keyword === 'required') path += `/${String(params.missingProperty)}`;
    if (error.keyword === 'additionalProperties') path += `/${String(params.additionalProperty)}`;
    const message =
      error.keyword === 'additionalProperties' ? 'must NOT have additional properties' : (error.message ?? `failed rule ${error.keyword}`);
    return { path: path === '' ? '/' : path, message };
  });
