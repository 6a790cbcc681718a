/**
 * A compact set of signed 64-bit integers given as canonical decimal text (parse-fields'
 * `parseInt64` output): open addressing over typed arrays, 9 bytes a slot at ≤ 50 % load, so a
 * million ids cost about 19 MB — a Set<string> of the same ids costs several times that, and its
 * keys (substrings of the parsed chunk) would keep whole input chunks alive.
 */
export class Int64Set {
  private high: Int32Array;
  private low: Int32Array;
  /** 0 empty, 1 non-negative, 2 negative. */
  private sign: Uint8Array;
  private mask: number;
  size = 0;

  constructor(initialCapacity = 1024) {
    let capacity = 16;
    while (capacity < initialCapacity * 2) capacity *= 2;
    this.high = new Int32Array(capacity);
    this.low = new Int32Array(capacity);
    this.sign = new Uint8Array(capacity);
    this.mask = capacity - 1;
  }

  /** Adds `text`; false when it was already there. */
  add(text: string): boolean {
    const negative = text.charCodeAt(0) === 45; // '-'
    // The magnitude as high·2^32 + low, in doubles: every intermediate stays below 2^53.
    let high = 0;
    let low = 0;
    const digitCount = negative ? text.length - 1 : text.length;
    if (digitCount <= 15) {
      // Exact as a double: let the engine parse it.
      const magnitude = negative ? -Number(text) : Number(text);
      high = Math.floor(magnitude / 4294967296);
      low = magnitude - high * 4294967296;
    } else {
      for (let index = negative ? 1 : 0; index < text.length; index += 1) {
        low = low * 10 + (text.charCodeAt(index) - 48);
        const carry = Math.floor(low / 4294967296);
        low -= carry * 4294967296;
        high = high * 10 + carry;
      }
    }
    const signFlag = negative ? 2 : 1;
    const high32 = high | 0;
    const low32 = low | 0;
    let slot = this.slotFor(high32, low32, signFlag);
    while (this.sign[slot] !== 0) {
      if (this.high[slot] === high32 && this.low[slot] === low32 && this.sign[slot] === signFlag) return false;
      slot = (slot + 1) & this.mask;
    }
    this.high[slot] = high32;
    this.low[slot] = low32;
    this.sign[slot] = signFlag;
    this.size += 1;
    if (this.size * 2 > this.sign.length) this.grow();
    return true;
  }

  private slotFor(high: number, low: number, signFlag: number): number {
    let hash = Math.imul(low ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(high ^ (signFlag << 29), 0xc2b2ae35);
    hash ^= hash >>> 15;
    hash = Math.imul(hash, 0x2c1b3c6d);
    hash ^= hash >>> 12;
    return hash & this.mask;
  }

  private grow(): void {
    const { high, low, sign } = this;
    const capacity = sign.length * 2;
    this.high = new Int32Array(capacity);
    this.low = new Int32Array(capacity);
    this.sign = new Uint8Array(capacity);
    this.mask = capacity - 1;
    for (let old = 0; old < sign.length; old += 1) {
      if (sign[old] === 0) continue;
      let slot = this.slotFor(high[old]!, low[old]!, sign[old]!);
      while (this.sign[slot] !== 0) slot = (slot + 1) & this.mask;
      this.high[slot] = high[old]!;
      this.low[slot] = low[old]!;
      this.sign[slot] = sign[old]!;
    }
  }
}

/**
 * A copy of `text` that does not share memory with the string it was cut from: V8 substrings point
 * into their parent, and a key kept for the whole run must not pin a megabyte-sized input chunk.
 */
export const ownedCopy = (text: string): string => JSON.parse(JSON.stringify(text)) as string;
