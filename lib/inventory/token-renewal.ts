import { UpstreamError, UpstreamFailure } from './upstream-error.ts';

/** A page of one of Jamf Pro's inventories: the inventory's size and the page's records. */
export interface JamfPage {
  totalCount: number;
  results: unknown[];
}

/**
 * An inventory page, or the news that upstream refused the token (401), which the read handles, or
 * refused a filter (400 to a filtered request).
 */
export type JamfPageResult =
  { kind: 'page'; page: JamfPage } | { kind: 'token-rejected'; detail: string } | { kind: 'filter-refused'; detail: string };

/** Jamf answered a filtered request 400: it cannot filter by those fields. */
export class FilterRefusedError extends Error {
  constructor(detail: string) {
    super(detail);
    this.name = 'FilterRefusedError';
  }
}

/** One page of a read, under the read's current token. */
export type PageReader = (page: number, size: number, signal: AbortSignal) => Promise<JamfPage>;

export interface ReauthenticationDeps {
  authenticate: (signal: AbortSignal) => Promise<string>;
  fetchPage: (token: string, page: number, size: number, signal: AbortSignal, since?: string) => Promise<JamfPageResult>;
  onAuthFailure: (() => void) | undefined;
  signal: AbortSignal;
}

/**
 * One read's token, renewed when upstream refuses it, shared by concurrent pages so four
 * simultaneous 401s renew it once. A token that served a page and is then refused has expired (a
 * long refresh outlives several short-lived tokens): it is renewed, as often as that happens. Two
 * tokens in a row refused before either served a page fail the read, since upstream then refuses the
 * credentials themselves; one alone may have expired on its way, or been refused for a page while
 * another page it served was still being answered. So renewals stay below two per page served.
 */
export const withReauthentication = (deps: ReauthenticationDeps) => {
  const tokens: { token: Promise<string>; served: boolean }[] = [];
  const issue = (): void => {
    const token = deps.authenticate(deps.signal);
    // Every page awaits the current token; this only keeps a failure from being "unhandled" meanwhile.
    token.catch(() => undefined);
    tokens.push({ token, served: false });
  };
  issue();

  return async (page: number, size: number, signal: AbortSignal, since?: string): Promise<JamfPage> => {
    for (;;) {
      const generation = tokens.length - 1;
      const current = tokens[generation]!;
      const result = await deps.fetchPage(await current.token, page, size, signal, since);
      if (result.kind === 'page') {
        current.served = true;
        return result.page;
      }
      if (result.kind === 'filter-refused') throw new FilterRefusedError(result.detail);
      // Reported once per refused token, however many pages it failed.
      if (generation === tokens.length - 1) {
        deps.onAuthFailure?.();
        if (generation > 0 && !current.served && !tokens[generation - 1]!.served) {
          throw new UpstreamError(UpstreamFailure.CredentialsRejected, {
            detail: `token refused after re-authentication: ${result.detail}`,
          });
        }
        issue();
      }
    }
  };
};
