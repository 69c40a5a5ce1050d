import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  IMAGE_BODY_LIMIT,
  IMAGE_BYTES_LIMIT,
  IMAGE_PIXEL_LIMIT,
  readImages,
  type ImageDeps,
} from '../../../src/api/images';
import { BODY_LIMIT } from '../../../src/protocol/body';
import { OpenAIError } from '../../../src/protocol/errors';
import { ECHO_MODEL, staticModelDirectory } from '../../../src/models/models';
import type { InputImage } from '../../../src/protocol/types';
import { parseChatRequest } from '../../../src/protocol/validate';
import { dataUrl, gif, imageMessage, solidPng } from '../../test-images';
import { chatRequest, echoStack, URL_BASE } from '../helpers';

const ORIGIN = URL_BASE;

/** The error `run` throws, as an OpenAIError. */
async function errorOf(run: () => Promise<unknown>): Promise<OpenAIError> {
  const err = await run().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OpenAIError);
  return err as OpenAIError;
}

/** Parses a request of `messages` and reads its images with `deps`. */
async function read(messages: unknown[], deps: Partial<ImageDeps> = {}) {
  const request = parseChatRequest({ model: 'hearth/echo', messages });
  await readImages(request, { origin: ORIGIN, ...deps });
  return request;
}

/** `png` with the size its header claims changed to `width`×`height`. */
function claimingSize(png: Uint8Array, width: number, height: number): Uint8Array {
  const copy = png.slice();
  // IHDR's data starts at byte 16: width, then height, big-endian.
  new DataView(copy.buffer).setUint32(16, width);
  new DataView(copy.buffer).setUint32(20, height);
  return copy;
}

describe('image parts after validation', () => {
  it('keep the order of text and images, each image named by its place in the request as sent', () => {
    const png = dataUrl(solidPng(2, 2, [255, 0, 0]));
    const request = parseChatRequest({
      model: 'hearth/echo',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'developer', content: 'and kind' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is' },
            { type: 'image_url', image_url: { url: png, detail: 'low' } },
            { type: 'text', text: 'this?' },
          ],
        },
      ],
    });
    // The system messages merged into one: the user's is messages[1] now, [2] as sent.
    expect(request.messages[1]).toEqual({
      role: 'user',
      content: 'what is\nthis?',
      parts: [
        { type: 'text', text: 'what is' },
        { type: 'image', param: 'messages[2].content[1]', detail: 'low', source: { url: png } },
        { type: 'text', text: 'this?' },
      ],
    });
  });

  it('leave a message of text parts only without parts, as before', () => {
    const request = parseChatRequest({
      model: 'hearth/echo',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
    });
    expect(request.messages[0]).toEqual({ role: 'user', content: 'hi' });
  });
});

describe('readImages', () => {
  it('reads a PNG data URL into its bytes, type and size, and decodes it', async () => {
    const png = solidPng(3, 2, [0, 0, 255]);
    const decoded: InputImage[] = [];
    const request = await read([imageMessage('what colour?', dataUrl(png))], {
      decode: async (image) => void decoded.push(image),
    });
    const part = request.messages[0]?.parts?.[1];
    expect(part).toEqual({
      type: 'image',
      param: 'messages[0].content[1]',
      source: { type: 'image/png', width: 3, height: 2, bytes: png },
    });
    expect(decoded).toHaveLength(1);
  });

  it('tells the format by its bytes, not by the type the data URL claims', async () => {
    const request = await read([
      imageMessage(
        'x',
        dataUrl(gif({ width: 7, height: 5 }, [{ width: 7, height: 5 }]), 'image/png'),
      ),
    ]);
    expect(request.messages[0]?.parts?.[1]).toMatchObject({
      source: { type: 'image/gif', width: 7, height: 5 },
    });
  });

  it('reads a URL of its own origin, absolute or a path, with the fetch it is given', async () => {
    const png = solidPng(1, 1, [1, 2, 3]);
    const asked: string[] = [];
    const request = await read(
      [imageMessage('a', `${ORIGIN}/photos/a.png`), imageMessage('b', '/photos/b.png')],
      { fetch: async (url) => (asked.push(url), new Response(png)) },
    );
    expect(asked).toEqual([`${ORIGIN}/photos/a.png`, `${ORIGIN}/photos/b.png`]);
    expect(request.messages[1]?.parts?.[1]).toMatchObject({ source: { width: 1, height: 1 } });
  });

  it('refuses a URL of another site with a 400 that says nothing leaves the device, fetching nothing', async () => {
    const fetch = vi.fn();
    const err = await errorOf(() =>
      read([{ role: 'user', content: 'hi' }, imageMessage('x', 'https://example.com/cat.png')], {
        fetch,
      }),
    );
    expect(err.status).toBe(400);
    expect(err.code).toBe('invalid_value');
    expect(err.param).toBe('messages[1].content[1].image_url.url');
    expect(err.message).toContain('example.com');
    expect(err.message).toContain('nothing leaves it');
    expect(fetch).not.toHaveBeenCalled();
  });

  it.each([
    ['a blob: URL', 'blob:http://hearth.test/1b2c'],
    ['a file: URL', 'file:///home/me/cat.png'],
  ])('refuses %s, which cannot be read here', async (_what, url) => {
    const err = await errorOf(() => read([imageMessage('x', url)]));
    expect(err.code).toBe('invalid_value');
    expect(err.param).toBe('messages[0].content[1].image_url.url');
  });

  it('answers a URL of its origin that is not there with a 400 naming the path and its status', async () => {
    const err = await errorOf(() =>
      read([imageMessage('x', '/gone.png')], {
        fetch: async () => new Response('no', { status: 404 }),
      }),
    );
    expect(err.status).toBe(400);
    expect(err.message).toContain('/gone.png could not be read (404)');
  });

  it.each([
    ['text', new TextEncoder().encode('hello, not an image')],
    ['one byte', new Uint8Array([0])],
    ['a BMP', new Uint8Array([0x42, 0x4d, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])],
  ])(
    'refuses %s as not a PNG, JPEG, WebP or GIF image (400, naming the part)',
    async (_, bytes) => {
      const err = await errorOf(() => read([imageMessage('x', dataUrl(bytes))]));
      expect(err.status).toBe(400);
      expect(err.code).toBe('invalid_value');
      expect(err.param).toBe('messages[0].content[1]');
      expect(err.message).toContain('not a PNG, JPEG, WebP or GIF image');
    },
  );

  it('refuses an image that does not decode with a 400, not a 500', async () => {
    const err = await errorOf(() =>
      read([imageMessage('x', dataUrl(solidPng(2, 2, [0, 0, 0])))], {
        decode: () => Promise.reject(new DOMException('bad', 'InvalidStateError')),
      }),
    );
    expect(err.status).toBe(400);
    expect(err.param).toBe('messages[0].content[1]');
    expect(err.message).toContain('could not be decoded');
  });

  it('refuses an image over the pixel limit by its header, without decoding it', async () => {
    const huge = claimingSize(solidPng(1, 1, [0, 0, 0]), 10_000, 10_000);
    const decode = vi.fn();
    const err = await errorOf(() => read([imageMessage('x', dataUrl(huge))], { decode }));
    expect(err.status).toBe(400);
    expect(err.message).toContain('10000×10000 pixels');
    expect(err.message).toContain(`${IMAGE_PIXEL_LIMIT / 1e6} megapixels`);
    expect(decode).not.toHaveBeenCalled();
  });

  it('refuses a file over the size limit with 413, naming the part', async () => {
    const big = new Uint8Array(IMAGE_BYTES_LIMIT + 1);
    big.set(solidPng(1, 1, [0, 0, 0]));
    const err = await errorOf(() =>
      read([imageMessage('x', '/big.png')], { fetch: async () => new Response(big) }),
    );
    expect(err.status).toBe(413);
    expect(err.code).toBe('request_too_large');
    expect(err.param).toBe('messages[0].content[1]');
  });

  it('cuts off a file of its origin sent without a length once it passes the limit, reading no further', async () => {
    let pulled = 0;
    let cancelled = false;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 1;
        controller.enqueue(new Uint8Array(1024 * 1024));
      },
      cancel() {
        cancelled = true;
      },
    });
    const err = await errorOf(() =>
      read([imageMessage('x', '/endless.png')], { fetch: async () => new Response(endless) }),
    );
    expect(err.status).toBe(413);
    expect(err.param).toBe('messages[0].content[1]');
    expect(cancelled).toBe(true);
    // 20 MiB and one chunk, not the endless rest (the stream may pull a little ahead).
    expect(pulled).toBeLessThan(IMAGE_BYTES_LIMIT / (1024 * 1024) + 4);
  });

  it('refuses a data: URL that cannot be read', async () => {
    const err = await errorOf(() => read([imageMessage('x', 'data:image/png;base64,%%%')]));
    expect(err.status).toBe(400);
    expect(err.param).toBe('messages[0].content[1].image_url.url');
  });
});

describe('a chat request with images', () => {
  let stack: ReturnType<typeof echoStack> | undefined;
  afterEach(() => stack?.close());

  it('reaches the echo engine, which says what each image it got is', async () => {
    stack = echoStack();
    const png = solidPng(4, 3, [255, 0, 0]);
    const response = await stack.api.fetch(
      chatRequest({ model: 'hearth/echo', messages: [imageMessage('what is', dataUrl(png))] }),
    );
    expect(response.status).toBe(200);
    const body = (await response.json()) as { choices: { message: { content: string } }[] };
    expect(body.choices[0]?.message.content).toBe(
      `what is\n[image: image/png 4×3, ${png.byteLength} bytes]`,
    );
  });

  it('to a model that does not take images is 400 unsupported_parameter naming the part', async () => {
    const blind = { ...ECHO_MODEL, capabilities: { ...ECHO_MODEL.capabilities, vision: false } };
    stack = echoStack({ models: staticModelDirectory([blind]) });
    const response = await stack.api.fetch(
      chatRequest({
        model: 'hearth/echo',
        messages: [
          { role: 'system', content: 's' },
          imageMessage('x', dataUrl(solidPng(1, 1, [0, 0, 0]))),
        ],
      }),
    );
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as { error: { code: string; param: string } };
    expect(error).toMatchObject({ code: 'unsupported_parameter', param: 'messages[1].content[1]' });
  });

  it(`may be larger than ${BODY_LIMIT} bytes, where a request without images may not`, async () => {
    stack = echoStack();
    // A PNG of 5 MiB: padding after its end, which its header reader never looks at.
    const padded = new Uint8Array(5 * 1024 * 1024);
    padded.set(solidPng(2, 2, [0, 255, 0]));
    const withImage = await stack.api.fetch(
      chatRequest({ model: 'hearth/echo', messages: [imageMessage('big', dataUrl(padded))] }),
    );
    expect(withImage.status).toBe(200);
    const text = await stack.api.fetch(
      chatRequest({
        model: 'hearth/echo',
        messages: [{ role: 'user', content: 'a'.repeat(BODY_LIMIT) }],
      }),
    );
    expect(text.status).toBe(413);
    const notJson = await stack.api.fetch(chatRequest('x'.repeat(BODY_LIMIT + 1)));
    expect(notJson.status).toBe(413);
  });

  it(`over ${IMAGE_BODY_LIMIT} bytes is 413, images or not`, async () => {
    stack = echoStack();
    const response = await stack.api.fetch(
      chatRequest({
        model: 'hearth/echo',
        messages: [imageMessage('x', `data:image/png;base64,${'A'.repeat(IMAGE_BODY_LIMIT)}`)],
      }),
    );
    expect(response.status).toBe(413);
    // And the next request still works.
    const next = await stack.api.fetch(
      chatRequest({ model: 'hearth/echo', messages: [{ role: 'user', content: 'hi' }] }),
    );
    expect(next.status).toBe(200);
  });
});
