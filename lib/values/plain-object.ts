/** A JSON object (not null, not an array): what a parsed body or an upstream record must be to be read by key. */
export const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
