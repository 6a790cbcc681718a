import { NotAcceptableError } from '../errors.ts';
import { headerValue } from './headers.ts';
import type { HttpMiddleware } from './http-types.ts';

interface MediaRange {
  type: string;
  subtype: string;
  quality: number;
}

const parseRange = (text: string): MediaRange | undefined => {
  const [mediaType = '', ...params] = text.split(';');
  const [type, subtype, extra] = mediaType.trim().toLowerCase().split('/');
  if (!type || !subtype || extra !== undefined) return undefined;
  let quality = 1;
  for (const param of params) {
    const [name, value] = param.split('=').map((part) => part.trim().toLowerCase());
    if (name === 'q') quality = Number(value);
  }
  return { type, subtype, quality: Number.isFinite(quality) ? quality : 0 };
};

/** 2 for `application/json`, 1 for `application/*`, 0 for `*\/*`, -1 when the range excludes JSON. */
const specificity = ({ type, subtype }: MediaRange): number => {
  if (type === 'application' && subtype === 'json') return 2;
  if (type === 'application' && subtype === '*') return 1;
  if (type === '*' && subtype === '*') return 0;
  return -1;
};

/**
 * Whether an `Accept` header admits `application/json` (RFC 9110 §12.5.1): the most specific
 * matching range decides, and `q=0` refuses. No header (or an empty one) accepts anything.
 */
const acceptsJson = (accept: string | undefined): boolean => {
  if (accept === undefined || accept.trim() === '') return true;
  let best: MediaRange | undefined;
  for (const part of accept.split(',')) {
    const range = parseRange(part);
    if (!range || specificity(range) < 0) continue;
    if (!best || specificity(range) > specificity(best)) best = range;
  }
  return best !== undefined && best.quality > 0;
};

/** Refuses (406) a request whose `Accept` header rules out JSON, the only representation a route has. */
export const jsonAccept = (): HttpMiddleware => ({
  before: ({ event }) => {
    if (!acceptsJson(headerValue(event.headers ?? {}, 'accept'))) throw new NotAcceptableError();
  },
});
