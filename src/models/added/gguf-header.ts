/**
 * @module
 * The metadata of a GGUF file, read from its first bytes: what a model says of itself (its
 * architecture, its lengths, how it pools) before anything is downloaded. The bytes may be cut
 * short anywhere (a Range request of the file's beginning), so the reader returns the key/value
 * pairs it read whole and whether it read them all; and they may come from anyone, so any length,
 * count or type it cannot believe ends the reading with an error in the result, never an
 * exception, and no loop runs longer than the bytes it is given.
 *
 * The layout (GGUF v2 and v3, little-endian; ggml's docs/gguf.md): `GGUF`, a u32 version, a u64
 * tensor count, a u64 key/value count, then the pairs: a string key (u64 byte length, UTF-8), a
 * u32 value type, the value. A string value is laid out as a key is; an array is a u32 element
 * type, a u64 count and the elements. The tensor infos that follow are not read.
 */
import type { EmbeddingFacts, Pooling } from '../catalog';

/** GGUF's value types, by their number in the file. */
export const GGUF_TYPES = [
  'u8',
  'i8',
  'u16',
  'i16',
  'u32',
  'i32',
  'f32',
  'bool',
  'string',
  'array',
  'u64',
  'i64',
  'f64',
] as const;

export type GgufTypeName = (typeof GGUF_TYPES)[number];

/**
 * A value that is not an array. 64-bit integers are numbers while they are safe integers, bigints
 * beyond.
 */
export type GgufScalar = number | bigint | boolean | string;

/** An array value: its element type and length, and its elements when it is short. */
export interface GgufArray {
  type: 'array';
  of: GgufTypeName;
  length: number;
  /** The elements, for an array of at most `SMALL_ARRAY` scalars; null for longer ones. */
  values: GgufScalar[] | null;
}

export type GgufValue = GgufScalar | GgufArray;

/** What was read of a header. */
export interface GgufHeader {
  /** 2 or 3; null when the bytes end before it. */
  version: number | null;
  tensorCount: number | null;
  kvCount: number | null;
  /** The pairs read whole, in the file's order. */
  metadata: Map<string, GgufValue>;
  /** Whether every pair was read (the bytes did not end before the last one did). */
  complete: boolean;
  /** Why reading stopped on bytes that cannot be a GGUF header; null when it did not. */
  error: string | null;
}

/** Arrays this long or shorter are given with their elements. */
export const SMALL_ARRAY = 64;
/** A key longer than this cannot be one (the spec allows 65 535 bytes). */
const MAX_KEY_BYTES = 65_535;
/** A string value longer than this is not believed (a chat template is some kilobytes). */
const MAX_STRING_BYTES = 1 << 30;
/** More elements than this in one array are not believed (a vocabulary has some 100 000s). */
const MAX_ARRAY_LENGTH = 2 ** 32;
/** More pairs than this are not believed (a model has some dozens). */
const MAX_KV_COUNT = 1 << 20;
/** More tensors than this are not believed (a big model has some thousands). */
const MAX_TENSOR_COUNT = 2 ** 32;
/** Arrays of arrays nest at most this deep (the spec allows it; no model does it twice). */
const MAX_DEPTH = 4;

/** Byte sizes of the fixed-size types, by type number; 0 for string and array. */
const SIZES = [1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8] as const;
const STRING = 8;
const ARRAY = 9;

/** The bytes end here: the pairs read so far are what there is. */
class Short {}
/** The bytes cannot be a GGUF header. */
class Bad {
  constructor(readonly message: string) {}
}

const decoder = new TextDecoder('utf-8');

/** A little-endian cursor over `bytes` that throws `Short` or `Bad`, caught by `readGgufHeader`. */
class Cursor {
  at = 0;
  readonly #view: DataView;

  constructor(readonly bytes: Uint8Array) {
    this.#view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  /** Moves past `n` bytes, returning where they began; `Short` when they are not all here. */
  take(n: number): number {
    if (n > this.bytes.byteLength - this.at) throw new Short();
    const at = this.at;
    this.at += n;
    return at;
  }

  u32(): number {
    return this.#view.getUint32(this.take(4), true);
  }

  /** A u64 as a number, or Infinity beyond the safe integers (every limit refuses it). */
  u64(): number {
    const value = this.#view.getBigUint64(this.take(8), true);
    return value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : Number.POSITIVE_INFINITY;
  }

  /** A string of at most `max` bytes. */
  string(max: number, what: string): string {
    const length = this.u64();
    if (length > max) throw new Bad(`${what} of ${describe(length)} bytes`);
    const at = this.take(length);
    return decoder.decode(this.bytes.subarray(at, at + length));
  }

  scalar(type: number): GgufScalar {
    const v = this.#view;
    switch (type) {
      case 0:
        return v.getUint8(this.take(1));
      case 1:
        return v.getInt8(this.take(1));
      case 2:
        return v.getUint16(this.take(2), true);
      case 3:
        return v.getInt16(this.take(2), true);
      case 4:
        return v.getUint32(this.take(4), true);
      case 5:
        return v.getInt32(this.take(4), true);
      case 6:
        return v.getFloat32(this.take(4), true);
      case 7:
        return v.getUint8(this.take(1)) !== 0;
      case STRING:
        return this.string(MAX_STRING_BYTES, 'a string');
      case 10:
        return safe(v.getBigUint64(this.take(8), true));
      case 11:
        return safe(v.getBigInt64(this.take(8), true));
      case 12:
        return v.getFloat64(this.take(8), true);
      default:
        throw new Bad(`unknown value type ${type}`);
    }
  }

  /** An array's element type and length, its elements read when it is short, walked over else. */
  array(depth: number): GgufArray {
    if (depth > MAX_DEPTH) throw new Bad(`arrays nested more than ${MAX_DEPTH} deep`);
    const of = this.u32();
    const name = GGUF_TYPES[of];
    if (name === undefined) throw new Bad(`unknown array element type ${of}`);
    const length = this.u64();
    if (length > MAX_ARRAY_LENGTH) throw new Bad(`an array of ${describe(length)} elements`);
    const size = SIZES[of] ?? 0;
    if (size > 0 && length > SMALL_ARRAY) {
      // Fixed-size elements are stepped over at once.
      this.take(length * size);
      return { type: 'array', of: name, length, values: null };
    }
    const values: GgufScalar[] | null = of !== ARRAY && length <= SMALL_ARRAY ? [] : null;
    // Each element is at least one byte, so this loop ends with the bytes at the latest.
    for (let i = 0; i < length; i++) {
      if (of === ARRAY) this.array(depth + 1);
      else if (values) values.push(this.scalar(of));
      else this.skipString();
    }
    return { type: 'array', of: name, length, values };
  }

  /** Steps over a string without decoding it. */
  skipString(): void {
    const length = this.u64();
    if (length > MAX_STRING_BYTES) throw new Bad(`a string of ${describe(length)} bytes`);
    this.take(length);
  }

  value(type: number): GgufValue {
    return type === ARRAY ? this.array(1) : this.scalar(type);
  }
}

/** A 64-bit integer as a number where that loses nothing. */
function safe(value: bigint): number | bigint {
  return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)
    ? Number(value)
    : value;
}

const describe = (n: number) => (Number.isFinite(n) ? String(n) : 'more than 2^53');

/**
 * Reads the metadata of a GGUF v2/v3 header from the file's first bytes (cut short anywhere).
 * Never throws: bytes that cannot be a GGUF header give `error`, bytes that end early give
 * `complete: false` and the pairs read before.
 */
export function readGgufHeader(bytes: Uint8Array): GgufHeader {
  const header: GgufHeader = {
    version: null,
    tensorCount: null,
    kvCount: null,
    metadata: new Map(),
    complete: false,
    error: null,
  };
  const cursor = new Cursor(bytes);
  try {
    const magic = [0x47, 0x47, 0x55, 0x46]; // GGUF
    for (const [i, byte] of magic.entries()) {
      if (i >= bytes.byteLength) throw new Short();
      if (bytes[i] !== byte) throw new Bad(`it does not begin with 'GGUF'`);
    }
    cursor.take(4);
    const version = cursor.u32();
    if (version !== 2 && version !== 3) {
      // A big-endian file's version reads backwards: 3 as 0x03000000.
      throw new Bad(
        version === 0x02000000 || version === 0x03000000
          ? 'a big-endian GGUF'
          : `GGUF version ${version}, not 2 or 3`,
      );
    }
    header.version = version;
    const tensorCount = cursor.u64();
    if (tensorCount > MAX_TENSOR_COUNT) throw new Bad(`${describe(tensorCount)} tensors`);
    header.tensorCount = tensorCount;
    const kvCount = cursor.u64();
    if (kvCount > MAX_KV_COUNT) throw new Bad(`${describe(kvCount)} key/value pairs`);
    header.kvCount = kvCount;
    for (let i = 0; i < kvCount; i++) {
      const key = cursor.string(MAX_KEY_BYTES, 'a key');
      const type = cursor.u32();
      const value = cursor.value(type);
      if (header.metadata.has(key)) throw new Bad(`the key ${JSON.stringify(key)} twice`);
      header.metadata.set(key, value);
    }
    header.complete = true;
  } catch (err) {
    if (err instanceof Bad) header.error = `not a GGUF header: ${err.message}`;
    else if (!(err instanceof Short)) header.error = `unreadable GGUF header: ${String(err)}`;
  }
  return header;
}

/** An integer value as a number, whatever its integer type; null for anything else. */
export function integerOf(value: GgufValue | undefined): number | null {
  // A whole float passes too (a value does not keep its type); a bigint is past any length.
  return typeof value === 'number' && Number.isInteger(value) ? value : null;
}

/** llama.cpp's `llama_pooling_type` (include/llama.h), as `<arch>.pooling_type` holds it. */
const POOLING_TYPES: Record<number, Pooling | undefined> = {
  // 0 is NONE: a vector per token, not per input; a model that says so does not embed here.
  1: 'mean',
  2: 'cls',
  3: 'last',
  // 4 is RANK: a reranker, whose classification head scores a query/document pair; it gives
  // scores, not vectors, so it is not an embedding model.
};

/** The model's width, `<arch>.embedding_length`, or null when the metadata does not give it. */
export function embeddingLengthOf(metadata: ReadonlyMap<string, GgufValue>): number | null {
  const arch = metadata.get('general.architecture');
  if (typeof arch !== 'string') return null;
  const length = integerOf(metadata.get(`${arch}.embedding_length`));
  return length !== null && length > 0 ? length : null;
}

/**
 * What the metadata says of an embedding model: one whose `<arch>.pooling_type` is mean, cls or
 * last. Null for any other (no pooling type, none, rank, or one this version does not know).
 * Its vectors are normalised because Hearth asks llama.cpp for L2-normalised ones.
 */
export function embeddingFactsOf(metadata: ReadonlyMap<string, GgufValue>): EmbeddingFacts | null {
  const arch = metadata.get('general.architecture');
  if (typeof arch !== 'string') return null;
  const type = integerOf(metadata.get(`${arch}.pooling_type`));
  const pooling = type === null ? undefined : POOLING_TYPES[type];
  if (!pooling) return null;
  return {
    dimensions: embeddingLengthOf(metadata),
    pooling,
    normalized: true,
    matryoshka: [],
  };
}
