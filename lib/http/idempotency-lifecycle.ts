import {
  IdempotencyAlreadyInProgressError,
  IdempotencyConfig,
  IdempotencyItemNotFoundError,
  IdempotencyValidationError,
  makeIdempotent,
} from '@aws-lambda-powertools/idempotency';
import type { BasePersistenceLayer } from '@aws-lambda-powertools/idempotency/persistence';
import { once } from '../async/once.ts';
import { AppError, describeError, type ErrorDetail } from '../errors.ts';
import type { Context } from 'aws-lambda';
import { addAccessLogFields } from './access-log.ts';
import type { HttpEvent, HttpOperation, HttpResult } from './http-types.ts';
import { callerOf, IDEMPOTENCY_KEEP_SECONDS } from './idempotency-key.ts';
import {
  IdempotencyInProgressError,
  IdempotencyKeyReusedError,
  IdempotencyStoreError,
  REPLAYED_HEADER,
  ReplayedOutcomeError,
} from './idempotency-errors.ts';

export interface IdempotentRequestsOptions {
  /** Where outcomes are kept: a Powertools persistence layer, made on the first request with a key. */
  persistenceStore: () => Promise<BasePersistenceLayer>;
  /** Starts every record's key, so two operations never share one (the route, e.g. `POST /api/users`). */
  keyPrefix: string;
  /** The form in which two parsed bodies are the same request (e.g. with aliases folded). */
  canonicalBody: (body: unknown) => unknown;
}

/** One request with a key, through the lifecycle. */
export type IdempotencyLifecycle = (event: HttpEvent, context: Context, operation: HttpOperation, key: string) => Promise<HttpResult>;

/**
 * The failures a retry would only meet again, kept like a response: a taken email (409) and a body
 * the rules refuse (422). Anything else thrown (a 5xx, a 406, a timeout) frees the key instead.
 */
const KEPT_ERROR_STATUSES: ReadonlySet<number> = new Set([409, 422]);

/** What a key keeps, as Powertools stores it (a DynamoDB map): plain JSON, no undefined values. */
type KeptOutcome =
  | { kind: 'response'; statusCode: number; headers: Record<string, string>; body: string }
  | { kind: 'error'; status: number; message: string; details: ErrorDetail[] };

/** What Powertools hashes: `[caller, key]` names the record, `request` is compared on every reuse. */
interface Claim {
  caller: string | null;
  key: string;
  request: unknown;
}

const keptResponse = (result: HttpResult): KeptOutcome => ({
  kind: 'response',
  statusCode: result.statusCode ?? 200,
  headers: Object.fromEntries(Object.entries(result.headers ?? {}).map(([name, value]) => [name, String(value)])),
  body: result.body ?? '',
});

const keptError = (error: AppError): KeptOutcome => ({
  kind: 'error',
  status: error.status,
  message: error.publicMessage,
  details: error.details ?? [],
});

/** A kept outcome given again, marked: a response as it was, an error through the envelope like any other. */
const replay = (outcome: KeptOutcome): HttpResult => {
  if (outcome.kind === 'error') throw new ReplayedOutcomeError(outcome.status, outcome.message, outcome.details);
  return { statusCode: outcome.statusCode, headers: { ...outcome.headers, [REPLAYED_HEADER]: 'true' }, body: outcome.body };
};

/** Why a key could not be claimed, as the project's own error; Powertools' errors are told apart by type. */
const claimFailure = (error: unknown): AppError => {
  if (error instanceof AppError) return error; // e.g. a ConfigError from making the store
  // Not found: a store that does not return the refused write's item (dynalite) reads it afterwards,
  // and a first request that ended without a kept outcome freed the key in between; asking again works.
  if (error instanceof IdempotencyAlreadyInProgressError || error instanceof IdempotencyItemNotFoundError)
    return new IdempotencyInProgressError();
  if (error instanceof IdempotencyValidationError) return new IdempotencyKeyReusedError();
  return new IdempotencyStoreError('claim the Idempotency-Key', error);
};

/**
 * The lifecycle of a request with an `Idempotency-Key` (docs/api.md#safe-retries) around the body's
 * rules and the operation, run by Powertools' `makeIdempotent` rather than its Middy middleware, so a
 * replay passes through the whole chain (docs/architecture.md#why-it-is-built-this-way). Loaded with
 * the first request that has a key (idempotent-requests.ts).
 */
export const makeIdempotencyLifecycle = ({
  persistenceStore,
  keyPrefix,
  canonicalBody,
}: IdempotentRequestsOptions): IdempotencyLifecycle => {
  const config = new IdempotencyConfig({
    eventKeyJmesPath: '[caller, key]',
    payloadValidationJmesPath: 'request',
    throwOnNoIdempotencyKey: true,
    // Powertools treats a record past it as absent; the table's TTL removes it later.
    expiresAfterSeconds: IDEMPOTENCY_KEEP_SECONDS,
    hashFunction: 'sha256',
    // Powertools hands a kept outcome back through this hook only: the mark tells a replay from a first answer.
    responseHook: (response) => ({ ...(response as Record<string, typeof response>), replayed: true }),
  });
  // The store (a DynamoDB client, loaded on demand) is built for the first request with a key: requests without one never need it.
  const run = once(async () =>
    makeIdempotent(async (_claim: Claim, attempt: () => Promise<KeptOutcome>) => attempt(), {
      persistenceStore: await persistenceStore(),
      config,
      keyPrefix,
      dataIndexArgument: 0,
    }),
  );

  return async (event, context, operation, key) => {
    let answered: { result: HttpResult } | { error: unknown } | undefined;
    const attempt = async (): Promise<KeptOutcome> => {
      try {
        const result = await operation(event, context);
        answered = { result };
        return keptResponse(result);
      } catch (error) {
        answered = { error };
        if (error instanceof AppError && KEPT_ERROR_STATUSES.has(error.status)) return keptError(error);
        throw error;
      }
    };

    let outcome: (KeptOutcome & { replayed?: boolean }) | undefined;
    try {
      // A claim whose request never completes (a crash, a timeout) lapses at this invocation's deadline.
      config.registerLambdaContext(context);
      outcome = await (await run())({ caller: callerOf(event), key, request: canonicalBody(event.body) }, attempt);
    } catch (error) {
      if (answered === undefined) throw claimFailure(error);
      // The request ran, and its answer stands: an outcome the store could not keep (a retry then meets
      // the claim until it lapses), or a failure whose claim could not be freed. Only the log says so.
      if (!('error' in answered) || error !== answered.error) addAccessLogFields(context, { idempotency_error: describeError(error) });
    }
    if (outcome?.replayed === true) {
      addAccessLogFields(context, { idempotent_replayed: true });
      return replay(outcome);
    }
    if (answered !== undefined && 'error' in answered) throw answered.error;
    return answered!.result;
  };
};
