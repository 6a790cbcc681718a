import { expect } from 'vitest';
import { UpstreamError } from '../../lib/inventory/upstream-error.ts';

/** What `promise` was rejected with (undefined when it fulfilled), so a test can read the error's fields. */
export const failureOf = (promise: Promise<unknown>): Promise<Error | undefined> =>
  promise.then(
    () => undefined,
    (error: unknown) => error as Error,
  );

/** The upstream failure `promise` was rejected with; anything else (or no rejection) fails the test. */
export const upstreamFailureOf = async (promise: Promise<unknown>): Promise<UpstreamError> => {
  const error = await failureOf(promise);
  expect(error).toBeInstanceOf(UpstreamError);
  return error as UpstreamError;
};
