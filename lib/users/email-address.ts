/** How strictly `email` is checked (`USER_EMAIL_PATTERN`, docs/configuration.md). */
export type EmailMode = 'strict' | 'off';

/** RFC 5321 caps a forward path at 256 octets including the angle brackets. */
export const MAX_EMAIL_LENGTH = 254;

/** The documented pattern (docs/api.md), character for character (JavaScript, no `u` flag). */
export const STRICT_EMAIL_SOURCE = String.raw`^(([^<>()\[\]\\.,;:\s@"]+(\.[^<>()\[\]\\.,;:\s@"]+)*)|(".+"))@((\[[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\])|(([a-zA-Z\-0-9]+\.)+[a-zA-Z]{2,}))$`;

export const STRICT_EMAIL_PATTERN = new RegExp(STRICT_EMAIL_SOURCE);

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
export const isEmailAddress = (value: string, mode: EmailMode): boolean => {
  if (value.length === 0 || value.length > MAX_EMAIL_LENGTH) return false;
  return mode === 'strict' ? STRICT_EMAIL_PATTERN.test(value) : isLooseEmail(value);
};

/** The key uniqueness is decided on: addresses are compared case-insensitively. */
export const emailKey = (email: string): string => email.toLowerCase();
