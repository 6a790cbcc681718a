import { addAccessLogFields } from './access-log.ts';
import type { HttpOperation } from './http-types.ts';
import { callerOf, idempotencyKeyDigest, readIdempotencyKey, requestOrigin } from './idempotency-key.ts';
import type { IdempotencyLifecycle, IdempotentRequestsOptions } from './idempotency-lifecycle.ts';
import { once } from '../async/once.ts';
import { setRequestOrigin } from './request-origin.ts';

/**
 * Safe retries with an `Idempotency-Key` header (docs/api.md#safe-retries) around the part of a
 * request that decides its outcome. Without the header the request runs as if this were absent, and
 * the Powertools lifecycle (idempotency-lifecycle.ts, with JMESPath and the persistence layer) is
 * never loaded: a container whose requests carry no key pays nothing for it at its cold start.
 */
export const idempotentRequests =
  (options: IdempotentRequestsOptions) =>
  (operation: HttpOperation): HttpOperation => {
    const lifecycle = once((): Promise<IdempotencyLifecycle> =>
      import('./idempotency-lifecycle.ts').then(({ makeIdempotencyLifecycle }) => makeIdempotencyLifecycle(options)),
    );
    return async (event, context) => {
      const key = readIdempotencyKey(event.headers ?? {});
      if (key === undefined) return operation(event, context);
      addAccessLogFields(context, { idempotency_key_hash: idempotencyKeyDigest(key) });
      setRequestOrigin(context, requestOrigin(callerOf(event), key));
      return (await lifecycle())(event, context, operation, key);
    };
  };
