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
