import { ucs2length } from '../validators/ucs2length.ts';

/** How strictly `email` is checked (`USER_EMAIL_PATTERN`, docs/configuration.md). */
export type EmailMode = 'strict' | 'off';

/**
 * RFC 5321 caps a forward path at 256 octets including the angle brackets, hence 254. The API
 * counts it in characters (code points), like every length it states and like the schema's
 * `maxLength`: a character outside the BMP (an emoji) counts once, not as its two UTF-16 units.
 */
export const MAX_EMAIL_LENGTH = 254;

/**
 * Whether `value` has more than MAX_EMAIL_LENGTH characters. A string has at least as many UTF-16
 * units as code points, so only one with more units than the cap needs counting.
 */
const isTooLong = (value: string): boolean => value.length > MAX_EMAIL_LENGTH && ucs2length(value) > MAX_EMAIL_LENGTH;

/** The documented pattern (docs/api.md), character for character (JavaScript, no `u` flag). */
const STRICT_EMAIL_SOURCE = String.raw`^(([^<>()\[\]\\.,;:\s@"]+(\.[^<>()\[\]\\.,;:\s@"]+)*)|(".+"))@((\[[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\])|(([a-zA-Z\-0-9]+\.)+[a-zA-Z]{2,}))$`;

const STRICT_EMAIL_PATTERN = new RegExp(STRICT_EMAIL_SOURCE);

const hasText = (part: string): boolean => part.trim() !== '';

/**
 * With the pattern off an address still needs an `@` with text on both sides. The last `@` splits it
 * (a quoted local part may hold one), so everything the strict pattern admits is admitted here too.
 * Surrounding white space is refused, as under the strict pattern: stored verbatim, ` a@b` and `a@b`
 * would be two users of one mailbox.
 */
const isLooseEmail = (value: string): boolean => {
  if (value !== value.trim()) return false;
  const at = value.lastIndexOf('@');
  return at !== -1 && hasText(value.slice(0, at)) && hasText(value.slice(at + 1));
};

/**
 * The length is checked before any pattern runs, so a backtracking regex never sees more than
 * MAX_EMAIL_LENGTH characters whatever the caller sends.
 */
const isEmailAddress = (value: string, mode: EmailMode): boolean => {
  if (value.length === 0 || isTooLong(value)) return false;
  return mode === 'strict' ? STRICT_EMAIL_PATTERN.test(value) : isLooseEmail(value);
};

/**
 * The check of the schema's `emailAddress` keyword, which sits beside `maxLength`: an address over
 * MAX_EMAIL_LENGTH passes it, since `maxLength` already reports that failure and a second detail
 * would only repeat it (the pattern is still never run on it); anything else is isEmailAddress.
 */
export const meetsEmailRule = (value: string, mode: EmailMode): boolean => isTooLong(value) || isEmailAddress(value, mode);
