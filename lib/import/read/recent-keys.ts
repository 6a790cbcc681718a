import { hashHalves, ownedCopy } from '../formats/row-keys.ts';

// Keys the read side saw lately, so a certain duplicate goes on without its record (docs/architecture.md, "Keys and users").

/** Ticket ids as int64Halves, in a direct-mapped table: a slot keeps the last id that hashed to it. */
export class RecentIds {
  private readonly slots: Int32Array;
  private readonly used: Uint8Array;
  private readonly mask: number;

  constructor(slotBits = 14) {
    this.slots = new Int32Array(2 << slotBits);
    this.used = new Uint8Array(1 << slotBits);
    this.mask = (1 << slotBits) - 1;
  }

  /** True when the id was seen (and is still remembered); otherwise remembers it and says false. */
  repeat(high: number, low: number): boolean {
    const slot = hashHalves(high, low) & this.mask;
    const at = slot * 2;
    if (this.used[slot] === 1 && this.slots[at] === high && this.slots[at + 1] === low) return true;
    this.used[slot] = 1;
    this.slots[at] = high;
    this.slots[at + 1] = low;
    return false;
  }
}

/**
 * Email keys (email-key.ts) in a direct-mapped table, by a hash of their characters: a slot keeps the last
 * email that hashed to it, compared in full before it counts as seen. Each kept email is a copy of
 * its own: a substring would pin the whole parsed chunk it came from.
 */
export class RecentEmails {
  private readonly slots: (string | undefined)[];
  private readonly mask: number;

  constructor(slotBits = 12) {
    this.slots = new Array<string | undefined>(1 << slotBits).fill(undefined);
    this.mask = (1 << slotBits) - 1;
  }

  /** True when the email was seen (and is still remembered); otherwise remembers it and says false. */
  repeat(emailKey: string): boolean {
    // FNV-1a over the UTF-16 code units: cheaper here than a Set, whose lookups hash each new string natively
    // but then also copy it on insertion.
    let hash = 0x811c9dc5;
    for (let index = 0; index < emailKey.length; index += 1) hash = Math.imul(hash ^ emailKey.charCodeAt(index), 0x01000193);
    const slot = (hash ^ (hash >>> 16)) & this.mask;
    if (this.slots[slot] === emailKey) return true;
    this.slots[slot] = ownedCopy(emailKey);
    return false;
  }
}
