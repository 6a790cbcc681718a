import { abandonOnAbort } from '../async/abandon-on-abort.ts';
import { ConfigError } from '../errors.ts';

/**
 * A secret is either given inline (local use) or named as an SSM SecureString (`<VAR>_SSM`, the
 * `variable` a failed read is reported under).
 */
export type SecretRef = { kind: 'value'; value: string } | { kind: 'ssm'; parameterName: string; variable: string };

/** SSM values are cached by Powertools for this long, so a rotated secret is picked up without a redeploy. */
const SECRET_CACHE_SECONDS = 300;

/**
 * Resolves a secret named in configuration: an inline value as is, an SSM parameter through
 * Powertools Parameters, which (with the SSM client) is loaded only then, so a function configured
 * without any `<SECRET>_SSM` never loads either. An SSM failure is a misconfiguration (500), never
 * leaked. `signal` bounds the wait (a hung SSM must not outlive the caller's deadline): on abort it
 * rejects with the signal's reason, for the caller to map like its other timeouts. `fresh` reads SSM
 * past the cache, for a secret its server has just refused (it may have been rotated).
 */
export const resolveSecret = async (ref: SecretRef, signal?: AbortSignal, options: { fresh?: boolean } = {}): Promise<string> => {
  if (ref.kind === 'value') return ref.value;
  let value: string | undefined;
  let wrapper: (new (...args: never[]) => Error) | undefined;
  try {
    const [{ getParameter }, { GetParameterError }] = await abandonOnAbort(
      Promise.all([import('@aws-lambda-powertools/parameters/ssm'), import('@aws-lambda-powertools/parameters/errors')]),
      signal,
    );
    wrapper = GetParameterError;
    value = await abandonOnAbort(
      getParameter(ref.parameterName, { decrypt: true, maxAge: SECRET_CACHE_SECONDS, forceFetch: options.fresh === true }),
      signal,
    );
  } catch (error) {
    if (signal?.aborted) throw error;
    // Powertools wraps SSM's reply in a GetParameterError that repeats its message: the reply itself
    // is the cause, so that logs treat it as one (lib/errors.ts keeps only its name, status and id).
    const cause = wrapper !== undefined && error instanceof wrapper && error.cause !== undefined ? error.cause : error;
    throw Object.assign(new ConfigError(ref.variable, 'could not be read from SSM'), { cause });
  }
  if (value === undefined || value === '') throw new ConfigError(ref.variable, 'names an empty SSM parameter');
  return value;
};
