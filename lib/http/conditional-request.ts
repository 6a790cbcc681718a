/**
 * Whether an `If-None-Match` header names `etag` (RFC 9110 §13.1.2: a list of entity tags or `*`,
 * compared weakly, so `W/"x"` matches `"x"`): the client's copy is current and gets 304.
 */
export const matchesIfNoneMatch = (header: string | undefined, etag: string): boolean => {
  if (header === undefined) return false;
  const wanted = etag.replace(/^W\//, '');
  return header.split(',').some((tag) => {
    const trimmed = tag.trim();
    return trimmed === '*' || trimmed.replace(/^W\//, '') === wanted;
  });
};
