/**
 * The bundle's one small cache: at most `capacity` entries, the least recently used one leaving first
 * (a `Map` keeps insertion order, so a use moves an entry to the end). For the few bodies and filter
 * results a container keeps; nothing here expires by time.
 */
export class RecentEntries<K, V> {
  readonly #entries = new Map<K, V>();
  readonly #capacity: number;

  constructor(capacity: number) {
    this.#capacity = Math.max(1, capacity);
  }

  /** The entry for `key`, now the most recently used. */
  get(key: K): V | undefined {
    if (!this.#entries.has(key)) return undefined;
    const value = this.#entries.get(key) as V;
    this.#entries.delete(key);
    this.#entries.set(key, value);
    return value;
  }

  has(key: K): boolean {
    return this.#entries.has(key);
  }

  /** Keeps `value` as the most recently used entry, letting the least recently used go past capacity. */
  set(key: K, value: V): V {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size > this.#capacity) this.#entries.delete(this.#entries.keys().next().value as K);
    return value;
  }

  get size(): number {
    return this.#entries.size;
  }
}
