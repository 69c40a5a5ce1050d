/**
 * Images made at test time, for the API's image parts: a PNG of one colour (pngjs writes it), and
 * the data URL a client would send for it.
 */
import { PNG } from 'pngjs';

/** A `width`×`height` PNG filled with `rgb` (0–255 each), opaque. */
export function solidPng(width: number, height: number, [r, g, b]: [number, number, number]) {
  const png = new PNG({ width, height });
  for (let i = 0; i < width * height; i += 1) png.data.set([r, g, b, 255], i * 4);
  return new Uint8Array(PNG.sync.write(png));
}

/**
 * A `width`×`height` PNG of noise, which compresses about as badly as a photo: 1600×1200 is a
 * file of about 7 MB, like a phone's. The same `seed` gives the same file.
 */
export function noisePng(width: number, height: number, seed = 1) {
  const png = new PNG({ width, height });
  let state = seed >>> 0 || 1;
  for (let i = 0; i < png.data.length; i += 1) {
    // xorshift32: cheap, and enough to defeat deflate.
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    png.data[i] = (i & 3) === 3 ? 255 : state & 255;
  }
  return new Uint8Array(PNG.sync.write(png));
}

/** `bytes` as a base64 `data:` URL of `type`. */
export function dataUrl(bytes: Uint8Array, type = 'image/png'): string {
  return `data:${type};base64,${Buffer.from(bytes).toString('base64')}`;
}

/** A user message of text then one image (by URL), as the openai SDK sends it. */
export function imageMessage(text: string, url: string) {
  return {
    role: 'user' as const,
    content: [
      { type: 'text' as const, text },
      { type: 'image_url' as const, image_url: { url } },
    ],
  };
}
