/**
 * Images made at test time, for the API's image parts: a PNG of one colour (pngjs writes it), and
 * the data URL a client would send for it; GIFs, APNGs, WebPs and JPEGs whose header and frames
 * disagree, written byte by byte (docs/security.md: an image's size is what is decoded).
 */
import { crc32 } from 'node:zlib';
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

// ---------------------------------------------------------------------------------------------
// GIF, byte by byte.

/** A frame of `gif()`: its place on the logical screen and its size. */
export interface GifFrame {
  x?: number;
  y?: number;
  width: number;
  height: number;
  /**
   * Whether its LZW data codes every pixel (colour 1), so that it decodes whole; false: only the
   * clear and end codes, a few bytes that say nothing of the frame's size (never to be decoded).
   */
  filled?: boolean;
}

const u16le = (n: number) => [n & 255, (n >> 8) & 255];

/**
 * GIF LZW data for `count` pixels of colour 1 with a 2-bit code size: a clear code before every
 * two pixels keeps the codes 3 bits wide (no dictionary entry is ever used), so that any decoder
 * reads it; cut into sub-blocks of up to 255 bytes, ending with the empty one.
 */
function lzwPixels(count: number): number[] {
  const CLEAR = 4;
  const END = 5;
  const codes: number[] = [];
  for (let i = 0; i < count; i += 1) {
    if (i % 2 === 0) codes.push(CLEAR);
    codes.push(1);
  }
  if (count === 0) codes.push(CLEAR);
  codes.push(END);
  const data: number[] = [];
  let bits = 0;
  let held = 0;
  for (const code of codes) {
    bits |= code << held;
    held += 3;
    while (held >= 8) {
      data.push(bits & 255);
      bits >>= 8;
      held -= 8;
    }
  }
  if (held > 0) data.push(bits & 255);
  const blocks: number[] = [2];
  for (let i = 0; i < data.length; i += 255) {
    const block = data.slice(i, i + 255);
    blocks.push(block.length, ...block);
  }
  blocks.push(0);
  return blocks;
}

/**
 * A GIF89a whose logical screen (its header) is `screen` and whose frames are `frames`, each after
 * a graphic control extension, the first after a comment and the looping application extension
 * too (extensions a reader must skip to find the frames). Four colours: black, red, green, blue.
 */
export function gif(screen: { width: number; height: number }, frames: readonly GifFrame[]) {
  const out: number[] = [...new TextEncoder().encode('GIF89a')];
  // A global colour table of 4 entries (size field 1).
  out.push(...u16le(screen.width), ...u16le(screen.height), 0x81, 0, 0);
  out.push(0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 255);
  out.push(0x21, 0xfe, 5, ...new TextEncoder().encode('hello'), 3, 1, 2, 3, 0);
  out.push(0x21, 0xff, 11, ...new TextEncoder().encode('NETSCAPE2.0'), 3, 1, 0, 0, 0);
  for (const frame of frames) {
    out.push(0x21, 0xf9, 4, 0, 10, 0, 0, 0);
    out.push(0x2c, ...u16le(frame.x ?? 0), ...u16le(frame.y ?? 0));
    out.push(...u16le(frame.width), ...u16le(frame.height), 0);
    out.push(...lzwPixels(frame.filled === false ? 0 : frame.width * frame.height));
  }
  out.push(0x3b);
  return new Uint8Array(out);
}

// ---------------------------------------------------------------------------------------------
// PNG chunks, WebP chunks, JPEG markers.

const u32be = (n: number) => [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];

/** A PNG chunk of `type` holding `data`, with its CRC. */
function pngChunk(type: string, data: readonly number[]): number[] {
  const typed = [...new TextEncoder().encode(type), ...data];
  return [...u32be(data.length), ...typed, ...u32be(crc32(new Uint8Array(typed)))];
}

/**
 * `png` (as `solidPng` writes it) made an APNG of one more frame: `acTL` and an `fcTL` of
 * `width`×`height` at (`x`, `y`) after its `IHDR`, the frame's data never written.
 */
export function apngClaiming(png: Uint8Array, frame: GifFrame): Uint8Array {
  const afterIhdr = 8 + 8 + 13 + 4;
  const fctl = [
    ...u32be(0),
    ...u32be(frame.width),
    ...u32be(frame.height),
    ...u32be(frame.x ?? 0),
    ...u32be(frame.y ?? 0),
    0,
    1,
    0,
    100,
    0,
    0,
  ];
  return new Uint8Array([
    ...png.subarray(0, afterIhdr),
    ...pngChunk('acTL', [...u32be(2), ...u32be(0)]),
    ...pngChunk('fcTL', fctl),
    ...png.subarray(afterIhdr),
  ]);
}

const u24le = (n: number) => [n & 255, (n >> 8) & 255, (n >> 16) & 255];

/** A RIFF chunk of `type` holding `data`, padded to an even length. */
function riffChunk(type: string, data: readonly number[]): number[] {
  const size = [...u24le(data.length), (data.length >>> 24) & 255];
  return [...new TextEncoder().encode(type), ...size, ...data, ...(data.length % 2 ? [0] : [])];
}

/** A VP8L bitstream's first bytes, saying `width`×`height` (its image data left out). */
function vp8l(width: number, height: number): number[] {
  const bits = (width - 1) | ((height - 1) << 14);
  return [0x2f, bits & 255, (bits >>> 8) & 255, (bits >>> 16) & 255, (bits >>> 24) & 255, 0, 0, 0];
}

/**
 * An extended WebP whose `VP8X` canvas is `canvas`, over a still `VP8L` image of `image`, or an
 * animation of one `ANMF` frame of `frame` (never decodable: the image data is left out).
 */
export function webpClaiming(
  canvas: { width: number; height: number },
  content: { image: { width: number; height: number } } | { frame: GifFrame },
): Uint8Array {
  const animated = 'frame' in content;
  const vp8x = [
    animated ? 0x02 : 0,
    0,
    0,
    0,
    ...u24le(canvas.width - 1),
    ...u24le(canvas.height - 1),
  ];
  let body: number[];
  if ('image' in content) {
    body = riffChunk('VP8L', vp8l(content.image.width, content.image.height));
  } else {
    const { x = 0, y = 0, width, height } = content.frame;
    const anmf = [
      ...u24le(x / 2),
      ...u24le(y / 2),
      ...u24le(width - 1),
      ...u24le(height - 1),
      ...u24le(100),
      0,
      ...riffChunk('VP8L', vp8l(width, height)),
    ];
    body = [...riffChunk('ANIM', [0, 0, 0, 0, 0, 0]), ...riffChunk('ANMF', anmf)];
  }
  const chunks = [...riffChunk('VP8X', vp8x), ...body];
  const riff = [...new TextEncoder().encode('WEBP'), ...chunks];
  return new Uint8Array([
    ...new TextEncoder().encode('RIFF'),
    ...u24le(riff.length),
    (riff.length >>> 24) & 255,
    ...riff,
  ]);
}

/** A JPEG marker segment: `FF`, `marker`, the length, `data`. */
function jpegSegment(marker: number, data: readonly number[]): number[] {
  return [0xff, marker, ((data.length + 2) >> 8) & 255, (data.length + 2) & 255, ...data];
}

/** A start-of-frame segment's data: 8-bit samples, `width`×`height`, one component. */
function sof(width: number, height: number): number[] {
  return [8, (height >> 8) & 255, height & 255, (width >> 8) & 255, width & 255, 1, 1, 0x11, 0];
}

/**
 * The markers of a JPEG (no real image data: never to be decoded): `SOI`, a JFIF `APP0`, then a
 * start of frame of `width`×`height` of the kind `marker` (`0xc0` baseline, `0xc3` lossless…),
 * written after `fill` extra `FF` bytes (which JPEG allows before any marker), a start of scan, and
 * `tail` (the scan's data, where another reader may find what looks like another frame).
 */
export function jpegFrame(
  { width, height }: { width: number; height: number },
  { marker = 0xc0, fill = 0, tail = [] }: { marker?: number; fill?: number; tail?: number[] } = {},
): Uint8Array {
  const jfif = [...new TextEncoder().encode('JFIF'), 0, 1, 1, 0, 0, 1, 0, 1, 0, 0];
  return new Uint8Array([
    0xff,
    0xd8,
    ...jpegSegment(0xe0, jfif),
    ...new Array<number>(fill).fill(0xff),
    ...jpegSegment(marker, sof(width, height)),
    ...jpegSegment(0xda, [1, 1, 0, 0, 63, 0]),
    ...tail,
    0xff,
    0xd9,
  ]);
}

/**
 * A JPEG whose frame is `real` (libjpeg's reading: a fill byte before its SOF) where image-size
 * 2.1's reader, which takes the fill byte's neighbour for a length, lands on a `fake` frame inside
 * the scan's data. Its 49 kB are mostly that jump.
 */
export function jpegWithFakeFrame(
  real: { width: number; height: number },
  fake: { width: number; height: number },
): Uint8Array {
  // After SOI (2), APP0 (2 + 16) and the fill byte, image-size reads the SOF's marker byte and the
  // high byte of its length (0xc0, 0x00) as a length: 49,152 bytes on from the marker byte.
  const marker = 2 + 18 + 1 + 1;
  const head = jpegFrame(real, { fill: 1 }).length - 2;
  const tail = new Array<number>(marker + 0xc000 - head).fill(0);
  tail.push(...jpegSegment(0xc0, sof(fake.width, fake.height)));
  return jpegFrame(real, { fill: 1, tail });
}
