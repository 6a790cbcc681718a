import { AppError } from '../errors.ts';

/**
 * The destination's user listing could not be read completely. The import fails rather than run on
 * a partial map (which would silently write row ids where destination ids belong). The message is
 * safe to show an operator: it names the page and the problem, never the credentials.
 */
export class TicketingListingError extends AppError {
  constructor(message: string, cause?: unknown) {
    super(502, 'Destination user listing failed', { cause, logMessage: message });
  }
}
