/**
 * @module
 * The size an image decodes to, read off its bytes before anything decodes it: not the size its
 * header claims, but the largest canvas any frame of the file makes a decoder allocate. For a
 * well-formed file the two are the same; where they differ (a GIF whose 1×1 header sits over a
 * 16000×16000 frame: Chromium decoded 256 megapixels from 174 kB) it is the frames that count.
 * Each reader walks the whole file's structure (chunks, blocks, markers), skipping the image data
 * by its lengths, so that a 20 MiB file is read in a few milliseconds. `undefined`: the size
 * cannot be read (the file is cut short or damaged before its first frame).
 */
import type { ImageType } from '../protocol/types';

/** A width and a height, in pixels. */
export interface Extent {
  width: number;
  height: number;
}

/** The size `bytes` (a file of `type`, told by its signature) decodes to, at most. */
export function decodedExtent(type: ImageType, bytes: Uint8Array): Extent | undefined {
  const read = { 'image/png': png, 'image/jpeg': jpeg, 'image/webp': webp, 'image/gif': gif }[type];
  const extent = read(new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  return extent && extent.width > 0 && extent.height > 0 ? extent : undefined;
}

/** `a` grown to hold `b`. */
const union = (a: Extent, b: Extent): Extent => ({
  width: Math.max(a.width, b.width),
  height: Math.max(a.height, b.height),
});

const ascii = (view: DataView, at: number, length: number) =>
  at + length <= view.byteLength
    ? String.fromCharCode(...new Uint8Array(view.buffer, view.byteOffset + at, length))
    : '';

/**
 * GIF: the logical screen and every frame's far edge. Chromium (Skia's SkGifImageReader, from
 * Mozilla's) grows the screen to hold the first frame (`max(screen, offset + size)`), and takes a
 * frame of zero width or height as the screen's; Firefox makes a first frame larger than the
 * screen the screen; both clip later frames to it. Decoding a GIF for an image (createImageBitmap,
 * WebLLM's own, the chat's `<img>`) decodes its first frame at that size. The union over every
 * frame is at least what either allocates, and the same as Chromium's for any GIF whose later
 * frames fit (every real one): a later frame outside the first is refused by size as though it
 * were decoded, which none of them does, rather than trusting the decoders' clipping.
 */
function gif(view: DataView): Extent | undefined {
  if (view.byteLength < 13) return undefined;
  const screen = { width: view.getUint16(6, true), height: view.getUint16(8, true) };
  const packed = view.getUint8(10);
  let at = 13 + (packed & 0x80 ? 3 << ((packed & 7) + 1) : 0);
  let extent: Extent | undefined;
  /** Skips data sub-blocks (a length byte, then that many bytes) to past the empty one. */
  const skipBlocks = () => {
    while (at < view.byteLength) {
      const length = view.getUint8(at);
      at += 1 + length;
      if (length === 0) return;
    }
  };
  while (at < view.byteLength) {
    const introducer = view.getUint8(at);
    if (introducer === 0x21) {
      // An extension: its label, then its sub-blocks.
      at += 2;
      skipBlocks();
    } else if (introducer === 0x2c) {
      // An image descriptor: left, top, width, height, flags; a local colour table; LZW data.
      if (at + 10 > view.byteLength) break;
      const x = view.getUint16(at + 1, true);
      const y = view.getUint16(at + 3, true);
      const width = view.getUint16(at + 5, true) || screen.width;
      const height = view.getUint16(at + 7, true) || screen.height;
      const flags = view.getUint8(at + 9);
      if (width > 0 && height > 0) {
        extent = union(extent ?? screen, { width: x + width, height: y + height });
      }
      at += 10 + (flags & 0x80 ? 3 << ((flags & 7) + 1) : 0) + 1;
      skipBlocks();
    } else {
      // The trailer (0x3b), or bytes that are no block: the decoders stop here too.
      break;
    }
  }
  return extent;
}

/**
 * PNG: its `IHDR`, and an APNG's frames (`fcTL`: size and offset). The APNG specification, and
 * Chromium's and Firefox's decoders, refuse a frame outside the `IHDR` canvas; the union is read
 * anyway, so that such a file is refused by size before a decoder is trusted with it.
 */
function png(view: DataView): Extent | undefined {
  if (view.byteLength < 33 || ascii(view, 12, 4) !== 'IHDR') return undefined;
  let extent: Extent = { width: view.getUint32(16), height: view.getUint32(20) };
  let at = 8;
  while (at + 8 <= view.byteLength) {
    const length = view.getUint32(at);
    const type = ascii(view, at + 4, 4);
    if (type === 'fcTL' && length >= 26 && at + 8 + 20 <= view.byteLength) {
      const data = at + 8;
      const width = view.getUint32(data + 4);
      const height = view.getUint32(data + 8);
      const x = view.getUint32(data + 12);
      const y = view.getUint32(data + 16);
      extent = union(extent, { width: x + width, height: y + height });
    }
    if (type === 'IEND') break;
    at += 12 + length;
  }
  return extent;
}

/**
 * WebP: a `VP8X` file's canvas, and its still image's bitstream or each animation frame (`ANMF`:
 * offset, size, and the size its own bitstream says); a simple file's bitstream (`VP8 ` or
 * `VP8L`). libwebp's demuxer (Chromium's and Firefox's decoders use it) refuses an image or a
 * frame that does not fit the canvas, and allocates the canvas; the union is read all the same.
 */
function webp(view: DataView): Extent | undefined {
  const end = Math.min(view.byteLength, 8 + (view.byteLength >= 8 ? view.getUint32(4, true) : 0));
  const first = ascii(view, 12, 4);
  if (first !== 'VP8X') return bitstream(view, 12);
  if (end < 30) return undefined;
  let extent: Extent = { width: 1 + uint24(view, 24), height: 1 + uint24(view, 27) };
  for (const [type, data, length] of riffChunks(view, 12, end)) {
    if (type === 'VP8 ' || type === 'VP8L') {
      const image = bitstream(view, data - 8);
      if (image) extent = union(extent, image);
    } else if (type === 'ANMF' && length >= 16) {
      const x = 2 * uint24(view, data);
      const y = 2 * uint24(view, data + 3);
      const frame = { width: 1 + uint24(view, data + 6), height: 1 + uint24(view, data + 9) };
      extent = union(extent, { width: x + frame.width, height: y + frame.height });
      for (const [inner, innerData] of riffChunks(view, data + 16, data + length)) {
        const image = inner === 'VP8 ' || inner === 'VP8L' ? bitstream(view, innerData - 8) : null;
        if (image) extent = union(extent, { width: x + image.width, height: y + image.height });
      }
    }
  }
  return extent;
}

const uint24 = (view: DataView, at: number) =>
  at + 3 <= view.byteLength
    ? view.getUint8(at) | (view.getUint8(at + 1) << 8) | (view.getUint8(at + 2) << 16)
    : 0;

/** The chunks of a RIFF list from `at` to `end`: type, where its data starts, its length. */
function* riffChunks(view: DataView, at: number, end: number): Generator<[string, number, number]> {
  while (at + 8 <= end) {
    const length = view.getUint32(at + 4, true);
    yield [ascii(view, at, 4), at + 8, Math.min(length, end - at - 8)];
    at += 8 + length + (length % 2);
  }
}

/** The size a `VP8 ` (lossy) or `VP8L` (lossless) chunk at `at` says its image is. */
function bitstream(view: DataView, at: number): Extent | undefined {
  const type = ascii(view, at, 4);
  const data = at + 8;
  if (type === 'VP8 ' && data + 10 <= view.byteLength) {
    // A key frame's tag (3 bytes), its start code (3), then 14-bit width and height (and a scale
    // in the top 2 bits, which decoders ignore).
    return {
      width: view.getUint16(data + 6, true) & 0x3fff,
      height: view.getUint16(data + 8, true) & 0x3fff,
    };
  }
  if (type === 'VP8L' && data + 5 <= view.byteLength) {
    // Its signature byte, then width − 1 and height − 1 in 14 bits each.
    const bits = view.getUint32(data + 1, true);
    return { width: 1 + (bits & 0x3fff), height: 1 + ((bits >>> 14) & 0x3fff) };
  }
  return undefined;
}

/**
 * JPEG: its first start of frame, of any kind (baseline, progressive, lossless, arithmetic), found
 * as libjpeg (Chromium's and Firefox's decoder) finds it: marker by marker, skipping each
 * segment by its length, bytes that are no marker, and the fill bytes (`FF`) JPEG allows before a
 * marker. libjpeg decodes at that frame's size and refuses a second one; what lies after the
 * start of scan is image data, never read for a size. (A reader that takes a fill byte's
 * neighbour for a length lands wherever the file wants — image-size 2.1's did.)
 */
function jpeg(view: DataView): Extent | undefined {
  let at = 2;
  while (at < view.byteLength) {
    // The next marker: past anything that is not FF, past fill bytes.
    while (at < view.byteLength && view.getUint8(at) !== 0xff) at += 1;
    while (at < view.byteLength && view.getUint8(at) === 0xff) at += 1;
    if (at >= view.byteLength) return undefined;
    const marker = view.getUint8(at);
    at += 1;
    // FF00 is no marker; RSTn and TEM stand alone; the start of scan or the end, and no frame yet.
    if (marker === 0x00 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) continue;
    if (marker === 0xda || marker === 0xd9) return undefined;
    if (at + 2 > view.byteLength) return undefined;
    const length = view.getUint16(at);
    if (length < 2) return undefined;
    const isFrame = marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker);
    if (isFrame) {
      if (at + 7 > view.byteLength) return undefined;
      return { width: view.getUint16(at + 5), height: view.getUint16(at + 3) };
    }
    at += length;
  }
  return undefined;
}
