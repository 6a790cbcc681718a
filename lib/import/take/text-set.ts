import { MAX_LOAD } from './int64-set.ts';
import { maxUtf8Bytes } from '../../bytes/growable-buffer.ts';

/**
 * Entries are packed into chunks, the first 64 KiB, each next one twice the last up to 8 MiB (a
 * small set stays small); a text longer than a chunk gets a chunk of its own.
 */
const FIRST_CHUNK_BYTES = 64 << 10;
const CHUNK_BYTES = 8 << 20;
/** An entry's place in a slot: its chunk above these bits, its offset in 4-byte units below. */
const OFFSET_BITS = 21;
const OFFSET_MASK = (1 << OFFSET_BITS) - 1;
/** Chunks a packed place can name (its + 1 must stay a positive Int32): nearly 8 GiB of text. */
const MAX_CHUNKS = (1 << (31 - OFFSET_BITS)) - 1;
const LENGTH_BYTES = 4;

/** A set of strings kept as their UTF-8 bytes off the JavaScript heap (docs/architecture.md, "Keys and users"). */
export class TextSet {
  private readonly chunks: Buffer[] = [];
  /** Bytes used of the last chunk (all of a text's own chunk). */
  private chunkUsed = 0;
  /** Packed place + 1 per slot; 0 marks an empty slot. */
  private places: Int32Array<ArrayBuffer>;
  private hashes: Int32Array<ArrayBuffer>;
  private mask: number;
  private scratch: Buffer = Buffer.allocUnsafeSlow(1024);
  private readonly malformed = new Set<string>();
  size = 0;

  constructor(initialCapacity = 1024) {
    let capacity = 16;
    while (capacity * MAX_LOAD < initialCapacity) capacity *= 2;
    this.places = new Int32Array(capacity);
    this.hashes = new Int32Array(capacity);
    this.mask = capacity - 1;
  }

  /** Adds `text`; false when it was already there. */
  add(text: string): boolean {
    if (!text.isWellFormed()) {
      if (this.malformed.has(text)) return false;
      this.malformed.add(text);
      this.size += 1;
      return true;
    }
    if (this.scratch.length < maxUtf8Bytes(text)) this.scratch = Buffer.allocUnsafeSlow(maxUtf8Bytes(text));
    const bytes = this.scratch;
    const length = bytes.write(text, 0, 'utf8');
    // FNV-1a over the bytes, as an Int32 from the start: that is how the index keeps it.
    let hash = 0x811c9dc5 | 0;
    for (let index = 0; index < length; index += 1) hash = Math.imul(hash ^ bytes[index]!, 0x01000193);
    // Murmur3's finalizer: FNV-1a's low bits, the ones that pick the slot, are mixed poorly.
    hash ^= hash >>> 16;
    hash = Math.imul(hash, 0x85ebca6b);
    hash ^= hash >>> 13;
    hash = Math.imul(hash, 0xc2b2ae35);
    hash ^= hash >>> 16;
    let slot = hash & this.mask;
    for (;;) {
      const stored = this.places[slot]!;
      if (stored === 0) break;
      if (this.hashes[slot] === hash && this.holds(stored - 1, bytes, length)) return false;
      slot = (slot + 1) & this.mask;
    }
    this.places[slot] = this.append(bytes, length) + 1;
    this.hashes[slot] = hash;
    this.size += 1;
    if (this.size > (this.mask + 1) * MAX_LOAD) this.grow();
    return true;
  }

  /** Whether the entry at `place` is `bytes[0, length)`. */
  private holds(place: number, bytes: Buffer, length: number): boolean {
    const chunk = this.chunks[place >>> OFFSET_BITS]!;
    const at = (place & OFFSET_MASK) * 4;
    if (chunk.readUInt32LE(at) !== length) return false;
    const start = at + LENGTH_BYTES;
    for (let index = 0; index < length; index += 1) if (chunk[start + index] !== bytes[index]) return false;
    return true;
  }

  /** Stores `bytes[0, length)` as an entry; its packed place. */
  private append(bytes: Buffer, length: number): number {
    const needed = (LENGTH_BYTES + length + 3) & ~3;
    let chunkIndex = this.chunks.length - 1;
    if (chunkIndex < 0 || this.chunkUsed + needed > this.chunks[chunkIndex]!.length) {
      if (this.chunks.length >= MAX_CHUNKS) throw new RangeError(`TextSet is full (${MAX_CHUNKS} chunks)`);
      const size = Math.min(CHUNK_BYTES, FIRST_CHUNK_BYTES * 2 ** this.chunks.length);
      // A text longer than a chunk fills a chunk of its own (at offset 0: the place needs no more bits).
      this.chunks.push(Buffer.allocUnsafeSlow(Math.max(size, needed)));
      this.chunkUsed = 0;
      chunkIndex += 1;
    }
    const chunk = this.chunks[chunkIndex]!;
    const at = this.chunkUsed;
    chunk.writeUInt32LE(length, at);
    bytes.copy(chunk, at + LENGTH_BYTES, 0, length);
    this.chunkUsed = at + needed;
    return (chunkIndex << OFFSET_BITS) | (at / 4);
  }

  /** Doubles the index, placing entries by their kept hashes (no bytes are read again). */
  private grow(): void {
    const oldPlaces = this.places;
    const oldHashes = this.hashes;
    this.places = new Int32Array(oldPlaces.length * 2);
    this.hashes = new Int32Array(oldPlaces.length * 2);
    this.mask = this.places.length - 1;
    for (let slot = 0; slot < oldPlaces.length; slot += 1) {
      const place = oldPlaces[slot]!;
      if (place === 0) continue;
      const hash = oldHashes[slot]!;
      let to = hash & this.mask;
      while (this.places[to] !== 0) to = (to + 1) & this.mask;
      this.places[to] = place;
      this.hashes[to] = hash;
    }
    // Freed now rather than at the garbage collector's next full collection (see Int64Set.grow).
    oldPlaces.buffer.transfer(0);
    oldHashes.buffer.transfer(0);
  }
}
