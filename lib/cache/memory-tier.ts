/**
 * The container's own tier: a bounded map with a per-entry expiry. Bounded by entry count because
 * the keys are few (one rendered body per latest-OS reference) and each value is one large string;
 * the least recently used entry goes first when it is full.
 */
export interface MemoryTier<Value> {
  get: (key: string) => Value | undefined;
  set: (key: string, value: Value, ttlMs: number) => void;
  delete: (key: string) => void;
  size: () => number;
}

export interface MemoryTierOptions {
  maxEntries: number;
  /** Milliseconds clock; injectable so tests control expiry. */
  now?: () => number;
}

interface Entry<Value> {
  value: Value;
  expiresAt: number;
}

const DEFAULT_MEMORY_ENTRIES = 16;

export const makeMemoryTier = <Value>(options: MemoryTierOptions = { maxEntries: DEFAULT_MEMORY_ENTRIES }): MemoryTier<Value> => {
  const { maxEntries, now = Date.now } = options;
  if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new RangeError('maxEntries must be a positive integer');
  // A Map iterates in insertion order, so re-inserting on a hit keeps the oldest-used entry first.
  const entries = new Map<string, Entry<Value>>();

  const evictExpired = (at: number): void => {
    for (const [key, entry] of entries) if (entry.expiresAt <= at) entries.delete(key);
  };

  return {
    get: (key) => {
      const entry = entries.get(key);
      if (entry === undefined) return undefined;
      if (entry.expiresAt <= now()) {
        entries.delete(key);
        return undefined;
      }
      entries.delete(key);
      entries.set(key, entry);
      return entry.value;
    },
    set: (key, value, ttlMs) => {
      entries.delete(key);
      if (!(ttlMs > 0)) return;
      const at = now();
      if (entries.size >= maxEntries) evictExpired(at);
      while (entries.size >= maxEntries) {
        const oldest = entries.keys().next();
        if (oldest.done === true) break;
        entries.delete(oldest.value);
      }
      entries.set(key, { value, expiresAt: at + ttlMs });
    },
    delete: (key) => {
      entries.delete(key);
    },
    size: () => entries.size,
  };
};
