import { getParameter } from '@aws-lambda-powertools/parameters/ssm';
import type { SecretRef } from './config.ts';
import { ConfigError } from './errors.ts';

/** SSM values are cached by Powertools for this long, so a rotated secret is picked up without a redeploy. */
const SECRET_CACHE_SECONDS = 300;

/** Resolves a secret named in configuration; an SSM failure is a misconfiguration (500), never leaked. */
export const resolveSecret = async (ref: SecretRef, variable: string): Promise<string> => {
  if (ref.kind === 'value') return ref.value;
  let value: string | undefined;
  try {
    value = await getParameter(ref.parameterName, { decrypt: true, maxAge: SECRET_CACHE_SECONDS });
  } catch (cause) {
    throw Object.assign(new ConfigError(`${variable}_SSM`, 'could not be read from SSM'), { cause });
  }
  if (value === undefined || value === '') throw new ConfigError(`${variable}_SSM`, 'names an empty SSM parameter');
  return value;
};
