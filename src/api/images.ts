/**
 * @module
 * The images of a chat request, read before an engine is asked: each image part's URL becomes the
 * checked bytes of a PNG, JPEG, WebP or GIF. A `data:` URL is decoded, a URL of this origin is
 * read (without cookies, following no redirect), any other URL is refused (nothing leaves the
 * device; a server's model gets the part as it came, and never comes here). An image over the
 * limits below, or one that does not decode, is refused with the status and the `param` of its
 * part, before anything runs.
 *
 * An image's size is what is decoded, read off all its frames before any decode
 * (`image-frames.ts`), never its header alone; the limits hold before the decode they guard.
 * Every engine only ever sees images that passed here: the echo engine and llama.cpp refuse a
 * part still a URL, and WebLLM (whose engine worker decodes each image again with
 * `createImageBitmap`, the same decoder as the check below) gets only the checked bytes as a
 * `data:` URL (`engines/webllm/webllm-mapping.ts`, which throws on a part never read).
 */
import { GIF } from 'image-size/types/gif';
import type { IImage } from 'image-size/types/interface';
import { JPG } from 'image-size/types/jpg';
import { PNG } from 'image-size/types/png';
import { WEBP } from 'image-size/types/webp';
import { readBodyBytes } from '../protocol/body';
import { decodedExtent } from './image-frames';
import { OpenAIError } from '../protocol/errors';
import type { ChatRequest, ImageType, InputImage, MessagePart } from '../protocol/types';
import type { Extent } from './image-frames';

/** Largest image file, in bytes: a phone's photo is 2–8 MB. */
export const IMAGE_BYTES_LIMIT = 20 * 1024 * 1024;
/** Most pixels in one image: a 48-megapixel phone photo passes; decoding one takes 4 bytes each. */
export const IMAGE_PIXEL_LIMIT = 50_000_000;
/**
 * Most images in one request: more than a conversation of pictures needs (Phi-3.5-vision fits
 * about one in its context, SmolVLM a few dozen), few enough that reading them stays quick.
 */
export const IMAGE_COUNT_LIMIT = 32;
/**
 * Most pixels of all a request's images together: two of the largest photos. WebLLM decodes a
 * request's images all at once and keeps them while it runs (4 bytes a pixel and more), so this
 * bounds its memory as the one-image limit bounds the check's.
 */
export const IMAGE_TOTAL_PIXEL_LIMIT = 100_000_000;
/**
 * Largest body of a chat request with images (others keep `BODY_LIMIT`, 4 MiB): a photo as a
 * data URL is a third larger than its file, so a few phone photos fit.
 */
export const IMAGE_BODY_LIMIT = 64 * 1024 * 1024;

/** The formats taken, each with image-size's reader that tells it by its signature. */
const FORMATS: readonly (readonly [ImageType, IImage])[] = [
  ['image/png', PNG],
  ['image/jpeg', JPG],
  ['image/webp', WEBP],
  ['image/gif', GIF],
];

/** What reading the images needs from the platform. */
export interface ImageDeps {
  /** The origin whose URLs may be read: the API's own. */
  origin: string;
  /**
   * Reads a URL of that origin with `init` (`redirect: 'error'`, `credentials: 'omit'`: see
   * `fileBytes`) (default: `fetch`; a service worker's own routes never see it).
   */
  fetch?: ((url: string, init: RequestInit) => Promise<Response>) | undefined;
  /**
   * Decodes the image (a GIF's first frame), throwing when it cannot, and may say the size it
   * decoded to: the service worker passes `createImageBitmap`'s. Without it only the bytes are
   * checked (Node's tests).
   */
  decode?: ((image: InputImage) => Promise<Extent | void>) | undefined;
}

/** Whether any message of the request carries an image. */
export function hasImages(request: ChatRequest): boolean {
  return request.messages.some((m) => m.parts?.some((part) => part.type === 'image'));
}

/** The image parts of the request, in order. */
export function imageParts(request: ChatRequest): Extract<MessagePart, { type: 'image' }>[] {
  return request.messages.flatMap((m) => m.parts?.filter((part) => part.type === 'image') ?? []);
}

/**
 * Reads every image of `request` in place (`MessagePart.source` becomes the image): at most
 * `IMAGE_COUNT_LIMIT` of them (refused before any is read), of at most `IMAGE_TOTAL_PIXEL_LIMIT`
 * pixels in all (refused before the image that passes it is decoded).
 */
export async function readImages(request: ChatRequest, deps: ImageDeps): Promise<void> {
  const parts = imageParts(request);
  const over = parts[IMAGE_COUNT_LIMIT];
  if (over) {
    throw invalid(
      over.param,
      `a request may carry at most ${IMAGE_COUNT_LIMIT} images, and this one has ${parts.length}; this part is the first over.`,
    );
  }
  let pixels = 0;
  // One at a time: each may be tens of megabytes while it is read and decoded.
  for (const part of parts) {
    if ('url' in part.source) {
      part.source = await readImage(part.source.url, part.param, deps, (image) => {
        pixels += image.width * image.height;
        if (pixels > IMAGE_TOTAL_PIXEL_LIMIT) {
          throw invalid(
            part.param,
            `the request's images come to ${(pixels / 1e6).toFixed(1)} megapixels with this one; the limit for all of a request's images is ${IMAGE_TOTAL_PIXEL_LIMIT / 1e6} megapixels.`,
          );
        }
      });
    }
  }
}

function invalid(param: string, why: string): OpenAIError {
  return new OpenAIError('invalid_value', `Invalid value for '${param}': ${why}`, { param });
}

/** The image at `url`, measured, counted (`count` may refuse it), then decoded. */
async function readImage(
  url: string,
  param: string,
  deps: ImageDeps,
  count: (image: InputImage) => void,
): Promise<InputImage> {
  const bytes = await fileBytes(url, param, deps);
  if (bytes.byteLength > IMAGE_BYTES_LIMIT) throw tooBig(param, bytes.byteLength);
  const image = measure(bytes, param);
  count(image);
  const decoded = await deps.decode?.(image).catch(() => {
    throw invalid(
      param,
      `the ${image.type} image could not be decoded: it is damaged or cut short.`,
    );
  });
  // The size read off the frames bounds what the decoder allocates; a decoder that went past it
  // (a format trick this reading does not know) is refused, never handed to an engine.
  if (decoded && decoded.width * decoded.height > image.width * image.height) {
    throw invalid(
      param,
      `the ${image.type} image decodes to ${decoded.width}×${decoded.height} pixels, more than its frames say (${image.width}×${image.height}).`,
    );
  }
  return image;
}

/**
 * The file a URL names: a data URL's bytes, or a same-origin URL's body. A fault of the URL names
 * it (`…image_url.url`); one of the file, the part (`part`).
 */
async function fileBytes(
  url: string,
  part: string,
  deps: ImageDeps,
): Promise<Uint8Array<ArrayBuffer>> {
  const param = `${part}.image_url.url`;
  let parsed: URL;
  try {
    parsed = new URL(url, deps.origin);
  } catch {
    throw invalid(param, 'it is not a URL; send a data: URL or a URL of this origin.');
  }
  if (parsed.protocol === 'data:') {
    // The platform's own data: URL reader (base64 or percent-encoded); a broken one rejects.
    const response = await fetch(parsed.href).catch(() => undefined);
    if (!response?.ok) throw invalid(param, 'the data: URL could not be read.');
    return new Uint8Array(await response.arrayBuffer());
  }
  if (parsed.origin !== deps.origin) {
    const where =
      parsed.protocol === 'http:' || parsed.protocol === 'https:'
        ? `Hearth fetches no image from another site (${parsed.host}): its models run on this device, and nothing leaves it.`
        : `a ${parsed.protocol} URL cannot be read here.`;
    throw invalid(
      param,
      `${where} Send the image as a data: URL (base64), or a URL of this origin.`,
    );
  }
  // No redirect is followed: the file must be the origin's own, and another place never asked
  // (the platform's fetch rejects one, before asking). No cookies or HTTP credentials go with it:
  // a caller of the API (a relay's program too) reads what anyone may read at that URL, never a
  // file the user's login guards, which a model would then describe back to it.
  const response = await (deps.fetch ?? fetch)(parsed.href, {
    redirect: 'error',
    credentials: 'omit',
  }).catch(() => undefined);
  const redirected =
    response?.redirected === true ||
    response?.type === 'opaqueredirect' ||
    (response !== undefined && response.status >= 300 && response.status < 400);
  if (!response || redirected) {
    await response?.body?.cancel().catch(() => undefined);
    throw invalid(
      param,
      `${parsed.pathname} could not be read (${response ? `a redirect, ${response.status || 'followed'}` : 'no answer, or a redirect'}): Hearth follows no redirect for an image, and sends no cookies. Send the file's own URL, or the image as a data: URL.`,
    );
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    throw invalid(param, `${parsed.pathname} could not be read (${response.status}).`);
  }
  // Counted as it arrives: a file with no length, or a wrong one, is cut off at the limit.
  return readBodyBytes(response, IMAGE_BYTES_LIMIT).catch((err: unknown) => {
    throw err instanceof OpenAIError && err.code === 'request_too_large' ? tooBig(part) : err;
  });
}

/** 413: the image at `param` is over `IMAGE_BYTES_LIMIT`. */
function tooBig(param: string, bytes?: number): OpenAIError {
  const size = bytes === undefined ? 'larger than the limit' : `${bytes} bytes; the limit is`;
  return new OpenAIError(
    'request_too_large',
    `The image at '${param}' is ${size} ${IMAGE_BYTES_LIMIT} bytes (20 MiB).`,
    { param },
  );
}

/**
 * The image's type (by its signature) and the size it decodes to (by its frames, `decodedExtent`),
 * within the pixel limit.
 */
function measure(bytes: Uint8Array<ArrayBuffer>, param: string): InputImage {
  const format = FORMATS.find(([, reader]) => safely(() => reader.validate(bytes)));
  if (!format) {
    throw invalid(param, 'it is not a PNG, JPEG, WebP or GIF image.');
  }
  const [type] = format;
  const size = safely(() => decodedExtent(type, bytes));
  if (!size) {
    throw invalid(param, `the ${type} image is damaged or cut short: no frame's size can be read.`);
  }
  const { width, height } = size;
  if (width * height > IMAGE_PIXEL_LIMIT) {
    throw invalid(
      param,
      `the image is ${width}×${height} pixels (${((width * height) / 1e6).toFixed(1)} megapixels); the limit is ${IMAGE_PIXEL_LIMIT / 1e6} megapixels.`,
    );
  }
  return { type, width, height, bytes };
}

/** `read()`, or undefined where a header reader throws on a short or broken file. */
function safely<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}
