import { JobError } from '../errors.ts';

/**
 * The destination's user listing could not be read completely. The import fails rather than run on
 * a partial map (which would silently write row ids where destination ids belong). The message
 * names the page and the problem, never the credentials.
 */
export class TicketingListingError extends JobError {
  constructor(message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
  }
}
