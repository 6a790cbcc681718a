import { hashHalves } from '../formats/row-keys.ts';

/**
 * The load at which a set's slots double, for Int64Set and TextSet: three quarters, not the usual
 * half, because an export of all-new rows keeps tens of millions of keys (at 18 million, half-full
 * tables needed 1 GB more, close to the import function's memory). Linear probing stays short
 * there with keys this well mixed; the sets are filled by the thread that is not the bottleneck.
 */
export const MAX_LOAD = 0.75;

/**
 * A compact set of signed 64-bit integers, given as their two's-complement halves (int64Halves):
 * open addressing over one Int32Array holding each value's two's-complement halves side by side
 * (one cache line per probe), 8 bytes a slot at ≤ 75 % load (MAX_LOAD), so a million ids cost about
 * 16 MB — a Set<string> of the same ids costs several times that, and its keys (substrings of the
 * parsed chunk) would keep whole input chunks alive.
 */
export class Int64Set {
  /** [high, low] per slot; (0, 0) marks an empty slot, so the value 0 is tracked apart. */
  private slots: Int32Array<ArrayBuffer>;
  private mask: number;
  private hasZero = false;
  size = 0;

  constructor(initialCapacity = 1024) {
    let capacity = 16;
    while (capacity * MAX_LOAD < initialCapacity) capacity *= 2;
    this.slots = new Int32Array(capacity * 2);
    this.mask = capacity - 1;
  }

  /** Adds the value whose halves int64Halves gave; false when it was already there. */
  addHalves(high: number, low: number): boolean {
    if (high === 0 && low === 0) {
      if (this.hasZero) return false;
      this.hasZero = true;
      this.size += 1;
      return true;
    }
    return this.insert(high, low);
  }

  private insert(high: number, low: number): boolean {
    const slots = this.slots;
    let slot = this.slotFor(high, low);
    for (;;) {
      const at = slot * 2;
      const storedHigh = slots[at]!;
      const storedLow = slots[at + 1]!;
      if (storedHigh === 0 && storedLow === 0) break;
      if (storedHigh === high && storedLow === low) return false;
      slot = (slot + 1) & this.mask;
    }
    slots[slot * 2] = high;
    slots[slot * 2 + 1] = low;
    this.size += 1;
    if (this.size > (this.mask + 1) * MAX_LOAD) this.grow();
    return true;
  }

  private slotFor(high: number, low: number): number {
    return hashHalves(high, low) & this.mask;
  }

  private grow(): void {
    const old = this.slots;
    this.slots = new Int32Array(old.length * 2);
    this.mask = old.length - 1;
    for (let at = 0; at < old.length; at += 2) {
      const high = old[at]!;
      const low = old[at + 1]!;
      if (high === 0 && low === 0) continue;
      let slot = this.slotFor(high, low);
      while (this.slots[slot * 2] !== 0 || this.slots[slot * 2 + 1] !== 0) slot = (slot + 1) & this.mask;
      this.slots[slot * 2] = high;
      this.slots[slot * 2 + 1] = low;
    }
    // Frees the old slots now: left to the garbage collector they would stay beside the new ones
    // until its next full collection (8 MB more at the peak for a million comments).
    old.buffer.transfer(0);
  }
}
