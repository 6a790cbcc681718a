import { readFile } from 'node:fs/promises';
import { STATUS_CODES } from 'node:http';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule, { type FormatsPlugin } from 'ajv-formats';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { parse } from 'yaml';

// ajv-formats ships CommonJS with a default export; under nodenext it arrives as the module object.
const addFormats = ((addFormatsModule as unknown as { default?: FormatsPlugin }).default ?? addFormatsModule) as FormatsPlugin;

type Json = Record<string, unknown>;

interface MediaType {
  schema?: Json;
}
export interface ResponseObject {
  description?: string;
  headers?: Record<string, Json>;
  content?: Record<string, MediaType>;
}
export interface Operation {
  operationId?: string;
  requestBody?: { content?: Record<string, MediaType> };
  responses: Record<string, ResponseObject>;
}
export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Json>; responses?: Record<string, ResponseObject>; headers?: Record<string, Json> };
}

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export const loadOpenApi = async (): Promise<OpenApiDocument> =>
  parse(await readFile(new URL('../../openapi.yaml', import.meta.url), 'utf8')) as OpenApiDocument;

/** Follows a local `$ref` (`#/components/...`); anything else is returned as is. */
export const deref = <T>(document: OpenApiDocument, value: T): T => {
  const ref = (value as { $ref?: unknown } | undefined)?.$ref;
  if (typeof ref !== 'string') return value;
  if (!ref.startsWith('#/')) throw new Error(`only local references are supported: ${ref}`);
  let target: unknown = document;
  for (const part of ref.slice(2).split('/')) target = (target as Json | undefined)?.[part];
  if (target === undefined) throw new Error(`unresolved reference ${ref}`);
  // A Reference Object's own `description` overrides the target's (OpenAPI 3.1).
  const { $ref: _ref, ...overrides } = value as Json;
  return deref(document, { ...(target as Json), ...overrides } as T);
};

/** Every `$ref` string in the document, for a dangling-reference check. */
export const allRefs = (value: unknown, found: string[] = []): string[] => {
  if (Array.isArray(value)) for (const item of value) allRefs(item, found);
  else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      if (key === '$ref' && typeof item === 'string') found.push(item);
      else allRefs(item, found);
    }
  }
  return found;
};

/** Compiles schemas of the document (JSON Schema 2020-12, as OpenAPI 3.1 uses) with its components as `$defs`. */
export const makeSchemaCompiler = (document: OpenApiDocument) => {
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true });
  addFormats(ajv);
  const rewrite = (schema: unknown): Json => JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', '"#/$defs/')) as Json;
  const defs = rewrite(document.components.schemas);
  const cache = new Map<string, ValidateFunction>();
  return (schema: Json): ValidateFunction => {
    const key = JSON.stringify(schema);
    let validate = cache.get(key);
    if (!validate) {
      validate = ajv.compile({ ...rewrite(schema), $defs: defs });
      cache.set(key, validate);
    }
    return validate;
  };
};

const headerOf = (result: APIGatewayProxyStructuredResultV2, name: string): string | undefined => {
  const key = Object.keys(result.headers ?? {}).find((header) => header.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : String(result.headers![key]);
};

/** The response object a path documents for a status, looking at every operation of the path (405 has none of its own). */
const documentedResponse = (document: OpenApiDocument, path: string, method: string, status: number): ResponseObject | undefined => {
  const item = document.paths[path];
  if (!item) return undefined;
  const own = item[method.toLowerCase()]?.responses[String(status)];
  if (own) return deref(document, own);
  if (status !== 405) return undefined;
  for (const operation of Object.values(item)) {
    const candidate = operation.responses?.[String(status)];
    if (candidate) return deref(document, candidate);
  }
  return undefined;
};

/**
 * Problems of a real handler response against the document: an undocumented status, a wrong
 * Content-Type, a body failing the schema, a missing or malformed documented header, an error
 * envelope whose status or reason phrase disagrees with the HTTP status. `path` is the template
 * (`/api/users/{id}`), or undefined for a path the API does not have (answered by `$default`).
 */
export const responseProblems = (
  document: OpenApiDocument,
  compile: ReturnType<typeof makeSchemaCompiler>,
  request: { method: string; path: string | undefined },
  result: APIGatewayProxyStructuredResultV2,
): string[] => {
  const status = result.statusCode ?? 200;
  const problems: string[] = [];
  const response =
    request.path === undefined
      ? // Unknown paths are answered by the `$default` route: only 404 in the envelope is documented for them.
        status === 404
        ? { content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } } }
        : undefined
      : documentedResponse(document, request.path, request.method, status);
  if (!response) return [`status ${status} is not documented for ${request.method} ${request.path ?? '(unknown path)'}`];

  const mediaTypes = Object.keys(response.content ?? {});
  const contentType = headerOf(result, 'content-type');
  if (mediaTypes.length > 0 && !mediaTypes.includes(contentType?.split(';')[0]?.trim() ?? '')) {
    problems.push(`Content-Type ${contentType} is not one of ${mediaTypes.join(', ')}`);
  }
  const schema = response.content?.['application/json']?.schema;
  let body: unknown;
  try {
    body = result.body === undefined || result.body === '' ? undefined : JSON.parse(result.body);
  } catch {
    problems.push('the body is not JSON');
  }
  if (schema) {
    const validate = compile(schema);
    if (!validate(body)) problems.push(...(validate.errors ?? []).map((error) => `body${error.instancePath} ${error.message}`));
  }
  for (const [name, header] of Object.entries(response.headers ?? {})) {
    const definition = deref(document, header) as { required?: boolean; schema?: Json };
    const value = headerOf(result, name);
    if (value === undefined) {
      if (definition.required) problems.push(`header ${name} is missing`);
      continue;
    }
    if (definition.schema) {
      const validate = compile(definition.schema);
      if (!validate(value)) problems.push(`header ${name}: ${value} ${validate.errors?.[0]?.message ?? ''}`);
    }
  }
  if (status >= 400) {
    const error = (body as { error?: { status?: unknown; httpMessage?: unknown } } | undefined)?.error;
    if (error?.status !== status) problems.push(`error.status ${String(error?.status)} differs from HTTP ${status}`);
    if (error?.httpMessage !== STATUS_CODES[status])
      problems.push(`error.httpMessage ${String(error?.httpMessage)} is not "${STATUS_CODES[status]}"`);
  }
  return problems;
};
