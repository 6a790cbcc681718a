import { AppError, ConflictError, type ErrorDetail } from '../errors.ts';

/** `Idempotent-Replayed: true` marks an answer given again from a kept outcome (docs/api.md#safe-retries). */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

/** The key's first request is still running: the caller retries later and then gets its outcome. */
export class IdempotencyInProgressError extends ConflictError {
  constructor() {
    super('A request with this Idempotency-Key is in progress');
  }
}

/** The key was first used with another body: answering its outcome would answer another request. */
export class IdempotencyKeyReusedError extends AppError {
  constructor() {
    super(422, 'Idempotency-Key was used with a different request');
  }
}

/** The store of kept outcomes failed or could not be reached: nothing ran. The cause goes to the log only. */
export class IdempotencyStoreError extends AppError {
  constructor(operation: string, cause: unknown) {
    super(503, 'Service Unavailable', { cause, logMessage: `Idempotency store failed: ${operation}` });
  }
}

/** A kept 409 or 422 given again: the same status, message and details, marked as replayed. */
export class ReplayedOutcomeError extends AppError {
  constructor(status: number, message: string, details: ErrorDetail[]) {
    super(status, message, { details, headers: { [REPLAYED_HEADER]: 'true' } });
  }
}
