import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';

export interface FunctionEntry {
  /** The function's name in serverless.yml (`devices`, `createUser`, …). */
  name: string;
  /** The TypeScript entry point, relative to the service directory (`functions/devices.ts`). */
  entry: string;
}

interface ServerlessFunctions {
  functions?: Record<string, { handler?: unknown }>;
}

/**
 * The functions declared in serverless.yml with their entry points, so the build and the bench bundle
 * exactly what deployment bundles. CloudFormation tags (`!Ref`) are irrelevant here and tolerated.
 */
export const readFunctionEntries = async (serviceDir: string): Promise<FunctionEntry[]> => {
  const descriptor = parse(await readFile(join(serviceDir, 'serverless.yml'), 'utf8'), { logLevel: 'silent' }) as ServerlessFunctions;
  return Object.entries(descriptor.functions ?? {}).map(([name, definition]) => {
    const handler = definition.handler;
    if (typeof handler !== 'string' || !/^[\w/.-]+\.\w+$/.test(handler)) {
      throw new Error(`serverless.yml: function ${name} has no handler of the form <file>.<export>`);
    }
    return { name, entry: `${handler.slice(0, handler.lastIndexOf('.'))}.ts` };
  });
};
