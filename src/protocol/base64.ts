/**
 * @module
 * Bytes as base64, for the wire (embedding vectors) and for engines that take an image only as a
 * `data:` URL (WebLLM).
 */

/** `bytes` as base64. */
export function base64Bytes(bytes: Uint8Array): string {
  let binary = '';
  // In slices: spreading a long array into fromCharCode overflows the stack.
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}
