/**
 * @module
 * The images of a chat request, read before an engine is asked: each image part's URL becomes the
 * checked bytes of a PNG, JPEG, WebP or GIF. A `data:` URL is decoded, a URL of this origin is
 * read, any other URL is refused (nothing leaves the device; a server's model gets the part as it
 * came, and never comes here). An image over the limits below, or one that does not decode, is
 * refused with the status and the `param` of its part, before anything runs.
 */
import { GIF } from 'image-size/types/gif';
import type { IImage } from 'image-size/types/interface';
import { JPG } from 'image-size/types/jpg';
import { PNG } from 'image-size/types/png';
import { WEBP } from 'image-size/types/webp';
import { readBodyBytes } from '../protocol/body';
import { OpenAIError } from '../protocol/errors';
import type { ChatRequest, ImageType, InputImage, MessagePart } from '../protocol/types';

/** Largest image file, in bytes: a phone's photo is 2–8 MB. */
export const IMAGE_BYTES_LIMIT = 20 * 1024 * 1024;
/** Most pixels in one image: a 48-megapixel phone photo passes; decoding one takes 4 bytes each. */
export const IMAGE_PIXEL_LIMIT = 50_000_000;
/**
 * Largest body of a chat request with images (others keep `BODY_LIMIT`, 4 MiB): a photo as a
 * data URL is a third larger than its file, so a few phone photos fit.
 */
export const IMAGE_BODY_LIMIT = 64 * 1024 * 1024;

/** The formats taken, each with the header reader that tells it and its size. */
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
  /** Reads a URL of that origin (default: `fetch`; a service worker's own routes never see it). */
  fetch?: ((url: string) => Promise<Response>) | undefined;
  /**
   * Decodes the image (a GIF's first frame), throwing when it cannot: the service worker passes
   * `createImageBitmap`'s. Without it only the header is checked (Node's tests).
   */
  decode?: ((image: InputImage) => Promise<void>) | undefined;
}

/** Whether any message of the request carries an image. */
export function hasImages(request: ChatRequest): boolean {
  return request.messages.some((m) => m.parts?.some((part) => part.type === 'image'));
}

/** The image parts of the request, in order. */
export function imageParts(request: ChatRequest): Extract<MessagePart, { type: 'image' }>[] {
  return request.messages.flatMap((m) => m.parts?.filter((part) => part.type === 'image') ?? []);
}

/** Reads every image of `request` in place (`MessagePart.source` becomes the image). */
export async function readImages(request: ChatRequest, deps: ImageDeps): Promise<void> {
  // One at a time: each may be tens of megabytes while it is read and decoded.
  for (const part of imageParts(request)) {
    if ('url' in part.source) part.source = await readImage(part.source.url, part.param, deps);
  }
}

function invalid(param: string, why: string): OpenAIError {
  return new OpenAIError('invalid_value', `Invalid value for '${param}': ${why}`, { param });
}

async function readImage(url: string, param: string, deps: ImageDeps): Promise<InputImage> {
  const bytes = await fileBytes(url, param, deps);
  if (bytes.byteLength > IMAGE_BYTES_LIMIT) throw tooBig(param, bytes.byteLength);
  const image = measure(bytes, param);
  await deps.decode?.(image).catch(() => {
    throw invalid(
      param,
      `the ${image.type} image could not be decoded: it is damaged or cut short.`,
    );
  });
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
  const response = await (deps.fetch ?? fetch)(parsed.href).catch(() => undefined);
  if (!response?.ok) {
    throw invalid(
      param,
      `${parsed.pathname} could not be read (${response?.status ?? 'no answer'}).`,
    );
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

/** The image's type and size from its header, within the pixel limit. */
function measure(bytes: Uint8Array<ArrayBuffer>, param: string): InputImage {
  const format = FORMATS.find(([, reader]) => safely(() => reader.validate(bytes)));
  if (!format) {
    throw invalid(param, 'it is not a PNG, JPEG, WebP or GIF image.');
  }
  const [type, reader] = format;
  const size = safely(() => reader.calculate(bytes));
  if (!size || !(size.width > 0) || !(size.height > 0)) {
    throw invalid(param, `the ${type} image's header is damaged: its size cannot be read.`);
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
