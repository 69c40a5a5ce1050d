/**
 * @module
 * Embedding vectors as the API hands them out, and the limits of a request: small and free of
 * dependencies, for the engine worker and the service worker alike.
 */

/** Most inputs in one request (OpenAI's limit too). */
export const MAX_EMBEDDING_INPUTS = 2048;
/**
 * Most tokens in one request, all inputs together (OpenAI's limit too). The engines count them as
 * they go, and stop when the count passes it.
 */
export const MAX_EMBEDDING_TOKENS = 300_000;

/** Scales `vector` in place to length 1 (a zero vector stays zero); returns it. */
export function normalizeInPlace(vector: Float32Array): Float32Array {
  let sum = 0;
  for (const x of vector) sum += x * x;
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < vector.length; i++) vector[i] = (vector[i] ?? 0) / norm;
  return vector;
}

/** The first `dimensions` values of `vector`, with length 1 again (Matryoshka truncation). */
export function shorten(vector: Float32Array, dimensions: number): Float32Array {
  return normalizeInPlace(vector.slice(0, dimensions));
}

/**
 * `bytes` as base64: a vector's, and an image's for the engine that takes images only as `data:`
 * URLs (WebLLM).
 */
export function base64Bytes(bytes: Uint8Array): string {
  let binary = '';
  // In slices: spreading a long array into fromCharCode overflows the stack.
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

/** A vector as the base64 of its little-endian float32 bytes. */
export function base64Vector(vector: Float32Array): string {
  const bytes = new Uint8Array(vector.length * 4);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < vector.length; i++) view.setFloat32(i * 4, vector[i] ?? 0, true);
  return base64Bytes(bytes);
}
