/**
 * One L1 shard: a byte-bounded LRU map from string keys to string values kept outside the V8 heap.
 *
 * Why off the heap: the garbage collector marks every live heap object at each major collection.
 * Kept as JS strings in an LRU (a Map entry, a key string and a value string per entry), a full
 * 256 MB L1 is millions of objects, and the marking they cost grows with the cache while requests
 * wait behind it (docs/router.md, "Hard deadline"). Here a shard is a handful of typed arrays
 * whatever it holds: the collector marks the arrays, never their contents.
 *
 * Layout: entry slots in one Int32Array, six ints a slot (hash, LRU links, record offset and
 * lengths); an open-addressing index (linear probing, backward-shift deletion) from the key's hash to the slot;
 * the keys and values in one byte arena: a key as UTF-8 (UTF-16 code units when it holds a lone
 * surrogate, which UTF-8 cannot keep apart), a value one byte per character when every character
 * is Latin-1 and two (little-endian UTF-16) otherwise. Lookups encode the key once (TextEncoder,
 * native) and hash and compare bytes. Records are appended; a record that no longer
 * fits compacts the arena (live records copied in LRU order). The arena never outgrows the bound:
 * each entry's bytes count its record with ARENA_SLACK.
 */

import { randomBytes } from 'node:crypto';

/**
 * What one entry costs besides its characters, at most: its slot's six ints (24 bytes) and up to
 * four index slots (16 bytes: the index is a power of two ≥ twice the slots), times 1.5 for the
 * growth (slots grow by half when full).
 */
export const ENTRY_OVERHEAD_BYTES = 64;
/**
 * Garbage an arena may hold beyond its live records before it is compacted, as a share of them:
 * counted in each entry's bytes, so that the arenas too stay within the bound.
 */
export const ARENA_SLACK = 1 / 8;

const FIRST_SLOTS = 64;
const META_INTS = 6;
const HASH = 0;
const PREV = 1;
const NEXT = 2;
const OFFSET = 3;
/** The key's bytes << 2 | KEY_UTF16 | WIDE_VALUE (a stored key is < 2^29 bytes: set() bounds it by maxBytes, ≤ 512 MiB a shard). */
const KEY_FLAGS = 4;
const VALUE_CHARS = 5;
const FIRST_ARENA_BYTES = 4 * 1024;
const SMALL_ARENA_BYTES = 64 * 1024;
const NONE = -1;
const KEY_UTF16 = 1;
const WIDE_VALUE = 2;
const HASH_SEED = (0x811c9dc5 ^ randomBytes(4).readInt32LE(0)) | 0;
/** Characters per String.fromCharCode call (its arguments live on the stack). */
const DECODE_CHUNK = 8192;

/** Bytes one entry counts against the bound: overhead plus its key's and value's bytes and their arena slack. */
export function entryBytes(key: string, value: string): number {
  encodeKey(key);
  return sizeOfRecord(keyLength + charBytes(value));
}

function sizeOfRecord(recordBytes: number): number {
  return ENTRY_OVERHEAD_BYTES + Math.ceil(recordBytes * (1 + ARENA_SLACK));
}

/** Bytes a string takes in the arena: one per character if all are Latin-1, else two. */
export function charBytes(s: string): number {
  return isWide(s) ? 2 * s.length : s.length;
}

function isWide(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0xff) return true;
  return false;
}

// The key being looked up or stored, encoded (encodeKey): one buffer for every shard (calls never
// interleave).
let keyBytes = new Uint8Array(1024);
let keyView = new DataView(keyBytes.buffer);
let keyLength = 0;
let keyUtf16 = false;
const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder();

/**
 * Encodes `key` into keyBytes / keyLength / keyUtf16 and returns its hash: FNV-1a over the bytes
 * from a per-process random seed, then murmur3's finaliser so that the index's low bits depend on
 * every byte. The seed keeps which keys share a probe run unpredictable from outside the process.
 */
function encodeKey(key: string): number {
  keyUtf16 = !key.isWellFormed();
  const most = keyUtf16 ? 2 * key.length : 3 * key.length;
  if (keyBytes.length < most) {
    keyBytes = new Uint8Array(Math.max(most, 2 * keyBytes.length));
    keyView = new DataView(keyBytes.buffer);
  }
  const length = keyUtf16 ? writeChars(keyBytes, 0, key, true) : utf8.encodeInto(key, keyBytes).written;
  keyLength = length;
  // Four bytes a step (the key's bytes are in the host's order either way: only equality matters).
  const view = keyView;
  const words = length & ~3;
  let h = HASH_SEED;
  for (let i = 0; i < words; i += 4) h = Math.imul(h ^ view.getInt32(i, true), 0x01000193);
  for (let i = words; i < length; i++) h = Math.imul(h ^ keyBytes[i], 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

// Compaction copies the live records here, then back: one buffer for every shard (compaction is
// synchronous, so calls never interleave).
let scratch = new Uint8Array(0);
// Wide strings are decoded through code units.
const units = new Uint16Array(DECODE_CHUNK);

/**
 * Reads a value where it lies: `length` characters from `offset` of `arena`, one byte each, or two
 * (little-endian UTF-16) when `wide`.
 */
export type ValueReader<T> = (arena: Uint8Array, offset: number, length: number, wide: boolean) => T;

export class L1Shard {
  /**
   * Per slot, META_INTS consecutive ints (one or two cache lines a lookup): the key's hash, the
   * LRU links, the record's offset, the key's bytes and flags (KEY_FLAGS), the value's characters.
   */
  private meta!: Int32Array;
  /** Slot + 1 per index position; 0 is empty. Its length is a power of two ≥ twice the slots. */
  private index!: Int32Array;
  private arena!: Uint8Array;
  /** The arena, for reading keys four bytes at a time. */
  private arenaView!: DataView;
  private arenaEnd = 0;
  /** Slots ever handed out (the next fresh one); freed slots chain through `next` from freeHead. */
  private slotsUsed = 0;
  private freeHead = NONE;
  /** Least recently used entry (evicted first) and most recently used. */
  private head = NONE;
  private tail = NONE;
  private count = 0;
  /** entryBytes of the live entries, summed. */
  private used = 0;
  /** Arena bytes of the live records, summed. */
  private recordBytes = 0;
  private readonly maxArenaBytes: number;

  constructor(
    /** Bound on the entries' bytes (entryBytes summed). */
    readonly maxBytes: number,
    private readonly onEvict: () => void,
  ) {
    this.maxArenaBytes = Math.max(1, maxBytes);
    this.allocate();
  }

  get size(): number {
    return this.count;
  }

  /** Bytes of the entries held (entryBytes summed): ≤ maxBytes. */
  get bytes(): number {
    return this.used;
  }

  /** The value of `key`, made most recently used. */
  get(key: string): string | undefined {
    return this.read(key, true, readChars);
  }

  /** The value of `key` without changing its recency. */
  peek(key: string): string | undefined {
    return this.read(key, false, readChars);
  }

  /**
   * What `reader` makes of the value of `key`, read where it lies (no string is made of it); made
   * most recently used when `touch`. The reader must not keep `arena`: later stores reuse it.
   */
  read<T>(key: string, touch: boolean, reader: ValueReader<T>): T | undefined {
    const slot = this.find(encodeKey(key));
    if (slot === NONE) return undefined;
    if (touch && slot !== this.tail) {
      this.unlink(slot);
      this.linkNewest(slot);
    }
    const at = slot * META_INTS;
    const keyFlags = this.meta[at + KEY_FLAGS];
    const offset = this.meta[at + OFFSET] + (keyFlags >>> 2);
    return reader(this.arena, offset, this.meta[at + VALUE_CHARS], (keyFlags & WIDE_VALUE) !== 0);
  }

  /**
   * Stores `value` as the most recently used entry, evicting least recently used ones until it
   * fits. An entry larger than the whole bound is not stored (and replaces nothing: the old
   * value of its key is removed).
   */
  set(key: string, value: string): void {
    const hash = encodeKey(key);
    const existing = this.find(hash);
    if (existing !== NONE) this.remove(existing);
    const wideValue = isWide(value);
    const recordBytes = keyLength + (wideValue ? 2 : 1) * value.length;
    const size = sizeOfRecord(recordBytes);
    if (size > this.maxBytes) return;
    while (this.used + size > this.maxBytes) {
      this.remove(this.head);
      this.onEvict();
    }
    this.reserveArena(recordBytes);
    const slot = this.takeSlot();
    const offset = this.arenaEnd;
    this.arena.set(keyBytes.subarray(0, keyLength), offset);
    this.arenaEnd = writeChars(this.arena, offset + keyLength, value, wideValue);
    const at = slot * META_INTS;
    this.meta[at + HASH] = hash;
    this.meta[at + OFFSET] = offset;
    this.meta[at + KEY_FLAGS] = (keyLength << 2) | (keyUtf16 ? KEY_UTF16 : 0) | (wideValue ? WIDE_VALUE : 0);
    this.meta[at + VALUE_CHARS] = value.length;
    this.linkNewest(slot);
    this.insertIndex(slot, hash);
    this.used += size;
    this.recordBytes += recordBytes;
    this.count++;
  }

  delete(key: string): boolean {
    const slot = this.find(encodeKey(key));
    if (slot === NONE) return false;
    this.remove(slot);
    return true;
  }

  /** Empties the shard and gives back its arrays' memory. */
  clear(): void {
    this.allocate();
    this.slotsUsed = 0;
    this.freeHead = NONE;
    this.head = NONE;
    this.tail = NONE;
    this.count = 0;
    this.used = 0;
    this.recordBytes = 0;
    this.arenaEnd = 0;
  }

  /**
   * Each key with what `reader` makes of its value, least to most recently used, without changing
   * recency (one pass over the slots, no lookups). The shard must not change while this runs.
   */
  *entriesOldestFirst<T>(reader: ValueReader<T>): Generator<[string, T]> {
    for (let slot = this.head; slot !== NONE; slot = this.meta[slot * META_INTS + NEXT]) {
      const at = slot * META_INTS;
      const keyFlags = this.meta[at + KEY_FLAGS];
      const offset = this.meta[at + OFFSET] + (keyFlags >>> 2);
      yield [this.keyOf(slot), reader(this.arena, offset, this.meta[at + VALUE_CHARS], (keyFlags & WIDE_VALUE) !== 0)];
    }
  }

  private allocate(): void {
    this.meta = new Int32Array(FIRST_SLOTS * META_INTS);
    this.index = new Int32Array(4 * FIRST_SLOTS);
    this.setArena(new Uint8Array(Math.min(FIRST_ARENA_BYTES, this.maxArenaBytes)));
  }

  private setArena(arena: Uint8Array): void {
    this.arena = arena;
    this.arenaView = new DataView(arena.buffer, arena.byteOffset, arena.byteLength);
  }

  /** The slot of the key encodeKey() last encoded (its hash given), or NONE. */
  private find(hash: number): number {
    const index = this.index;
    const mask = index.length - 1;
    for (let at = hash & mask; ; at = (at + 1) & mask) {
      const entry = index[at];
      if (entry === 0) return NONE;
      const slot = entry - 1;
      if (this.meta[slot * META_INTS + HASH] === hash && this.keyEquals(slot)) return slot;
    }
  }

  /** Whether `slot` holds the key encodeKey() last encoded. */
  private keyEquals(slot: number): boolean {
    const keyFlags = this.meta[slot * META_INTS + KEY_FLAGS];
    const length = keyLength;
    if (keyFlags >>> 2 !== length || ((keyFlags & KEY_UTF16) !== 0) !== keyUtf16) return false;
    const arena = this.arenaView;
    const key = keyView;
    const offset = this.meta[slot * META_INTS + OFFSET];
    const words = length & ~3;
    for (let i = 0; i < words; i += 4) if (arena.getInt32(offset + i, true) !== key.getInt32(i, true)) return false;
    for (let i = words; i < length; i++) if (arena.getUint8(offset + i) !== key.getUint8(i)) return false;
    return true;
  }

  private keyOf(slot: number): string {
    const keyFlags = this.meta[slot * META_INTS + KEY_FLAGS];
    const offset = this.meta[slot * META_INTS + OFFSET];
    const length = keyFlags >>> 2;
    if ((keyFlags & KEY_UTF16) !== 0) return readChars(this.arena, offset, length / 2, true);
    return utf8Decoder.decode(this.arena.subarray(offset, offset + length));
  }

  private recordBytesOf(slot: number): number {
    const keyFlags = this.meta[slot * META_INTS + KEY_FLAGS];
    return (keyFlags >>> 2) + ((keyFlags & WIDE_VALUE) !== 0 ? 2 : 1) * this.meta[slot * META_INTS + VALUE_CHARS];
  }

  private remove(slot: number): void {
    this.unlink(slot);
    this.deleteIndex(slot);
    const recordBytes = this.recordBytesOf(slot);
    this.used -= sizeOfRecord(recordBytes);
    this.recordBytes -= recordBytes;
    this.count--;
    this.meta[slot * META_INTS + NEXT] = this.freeHead;
    this.freeHead = slot;
    // An empty shard's arena holds only garbage: start it over.
    if (this.count === 0) this.arenaEnd = 0;
  }

  private linkNewest(slot: number): void {
    this.meta[slot * META_INTS + PREV] = this.tail;
    this.meta[slot * META_INTS + NEXT] = NONE;
    if (this.tail === NONE) this.head = slot;
    else this.meta[this.tail * META_INTS + NEXT] = slot;
    this.tail = slot;
  }

  private unlink(slot: number): void {
    const before = this.meta[slot * META_INTS + PREV];
    const after = this.meta[slot * META_INTS + NEXT];
    if (before === NONE) this.head = after;
    else this.meta[before * META_INTS + NEXT] = after;
    if (after === NONE) this.tail = before;
    else this.meta[after * META_INTS + PREV] = before;
  }

  private takeSlot(): number {
    if (this.freeHead !== NONE) {
      const slot = this.freeHead;
      this.freeHead = this.meta[slot * META_INTS + NEXT];
      return slot;
    }
    if (this.slotsUsed * META_INTS === this.meta.length) this.growSlots();
    return this.slotsUsed++;
  }

  private growSlots(): void {
    const capacity = Math.ceil((this.meta.length / META_INTS) * 1.5);
    const meta = new Int32Array(capacity * META_INTS);
    meta.set(this.meta);
    this.meta = meta;
    if (this.index.length < 2 * capacity) {
      let length = this.index.length;
      while (length < 2 * capacity) length *= 2;
      this.index = new Int32Array(length);
      for (let slot = this.head; slot !== NONE; slot = this.meta[slot * META_INTS + NEXT])
        this.insertIndex(slot, this.meta[slot * META_INTS + HASH]);
    }
  }

  private insertIndex(slot: number, hash: number): void {
    const index = this.index;
    const mask = index.length - 1;
    let at = hash & mask;
    while (index[at] !== 0) at = (at + 1) & mask;
    index[at] = slot + 1;
  }

  /** Removes `slot` from the index, shifting later entries of its probe run back (no tombstones). */
  private deleteIndex(slot: number): void {
    const index = this.index;
    const mask = index.length - 1;
    let hole = this.meta[slot * META_INTS + HASH] & mask;
    while (index[hole] !== slot + 1) hole = (hole + 1) & mask;
    index[hole] = 0;
    for (let at = (hole + 1) & mask; index[at] !== 0; at = (at + 1) & mask) {
      const home = this.meta[(index[at] - 1) * META_INTS + HASH] & mask;
      // The entry at `at` may move into the hole unless its home lies cyclically in (hole, at].
      const stays = hole <= at ? home > hole && home <= at : home > hole || home <= at;
      if (!stays) {
        index[hole] = index[at];
        index[at] = 0;
        hole = at;
      }
    }
  }

  /**
   * Makes room for `recordBytes` at the arena's end by compacting it: in place while the live
   * records and the new one fit with ARENA_SLACK to spare, else into a larger arena (never past
   * maxArenaBytes, which always fits: eviction has made room for the record). Each compaction in
   * place frees at least about a ninth of the arena, so its copying stays proportional to what is
   * stored.
   */
  private reserveArena(recordBytes: number): void {
    if (this.arenaEnd + recordBytes <= this.arena.length) return;
    const needed = this.recordBytes + recordBytes;
    const target = Math.min(this.maxArenaBytes, Math.ceil(needed * (1 + ARENA_SLACK)));
    if (target > this.arena.length) {
      // A small arena doubles; past SMALL_ARENA_BYTES it takes its full size at once: the pages of
      // a large allocation are committed only as records reach them, and one allocation per shard
      // leaves the allocator nothing to fragment.
      const length = target <= SMALL_ARENA_BYTES ? Math.max(target, 2 * this.arena.length) : this.maxArenaBytes;
      const larger = new Uint8Array(Math.min(length, this.maxArenaBytes));
      this.arenaEnd = this.copyLive(larger);
      this.setArena(larger);
      return;
    }
    if (scratch.length < this.arena.length) scratch = new Uint8Array(this.arena.length);
    const end = this.copyLive(scratch);
    this.arena.set(scratch.subarray(0, end));
    this.arenaEnd = end;
  }

  /** Copies the live records to the start of `target` in LRU order, updating their offsets; returns the end. */
  private copyLive(target: Uint8Array): number {
    const arena = this.arena;
    let end = 0;
    for (let slot = this.head; slot !== NONE; slot = this.meta[slot * META_INTS + NEXT]) {
      const offset = this.meta[slot * META_INTS + OFFSET];
      const length = this.recordBytesOf(slot);
      target.set(arena.subarray(offset, offset + length), end);
      this.meta[slot * META_INTS + OFFSET] = end;
      end += length;
    }
    return end;
  }
}

/** Writes `s` at `offset` (one or two bytes a character); returns the end. */
function writeChars(arena: Uint8Array, offset: number, s: string, wide: boolean): number {
  if (!wide) {
    for (let i = 0; i < s.length; i++) arena[offset + i] = s.charCodeAt(i);
    return offset + s.length;
  }
  for (let i = 0; i < s.length; i++) {
    const unit = s.charCodeAt(i);
    arena[offset + 2 * i] = unit & 0xff;
    arena[offset + 2 * i + 1] = unit >>> 8;
  }
  return offset + 2 * s.length;
}

/** The string `length` characters at `offset` spell (a ValueReader). */
export function readChars(arena: Uint8Array, offset: number, length: number, wide: boolean): string {
  let out = '';
  for (let start = 0; start < length; start += DECODE_CHUNK) {
    const n = Math.min(DECODE_CHUNK, length - start);
    if (!wide) {
      const bytes = arena.subarray(offset + start, offset + start + n);
      out += String.fromCharCode.apply(null, bytes as unknown as number[]);
    } else {
      for (let i = 0; i < n; i++) {
        const at = offset + 2 * (start + i);
        units[i] = arena[at] | (arena[at + 1] << 8);
      }
      out += String.fromCharCode.apply(null, units.subarray(0, n) as unknown as number[]);
    }
  }
  return out;
}
