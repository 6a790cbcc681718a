/** Which tier answered a cached read: an integer enumeration in code, a name on the log line. */
export const CacheTier = { Upstream: 0, Memory: 1, Cluster: 2 } as const;
export type CacheTier = (typeof CacheTier)[keyof typeof CacheTier];

const NAMES = ['upstream', 'memory', 'cluster'] as const;
export type CacheTierName = (typeof NAMES)[number];

export const cacheTierName = (tier: CacheTier): CacheTierName => NAMES[tier];
