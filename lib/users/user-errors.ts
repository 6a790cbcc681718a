import { AppError, ConflictError } from '../errors.ts';

/** The user store failed or could not be reached; the cause goes to the log, never to the caller. */
export class UserStoreError extends AppError {
  constructor(operation: string, cause: unknown) {
    super(503, 'Service Unavailable', { cause, logMessage: `User storage failed: ${operation}` });
  }
}

/** A user with the same email (compared case-insensitively) already exists. */
export class EmailTakenError extends ConflictError {
  constructor() {
    super('A user with this email already exists');
  }
}
