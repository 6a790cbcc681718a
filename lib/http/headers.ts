/**
 * A request header by name, whatever its case: API Gateway hands HTTP API functions lower-cased
 * names, but a sample event or another caller of the handler may not.
 */
export const headerValue = (headers: Readonly<Record<string, string | undefined>>, name: string): string | undefined => {
  const lower = name.toLowerCase();
  const key = Object.keys(headers).find((candidate) => candidate.toLowerCase() === lower);
  return key === undefined ? undefined : headers[key];
};
