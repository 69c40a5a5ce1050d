/**
 * An image's size is what is decoded, not what its header says (issue 46, item 2): a GIF's frames
 * (the first may outgrow the logical screen, and the decoder grows its canvas to fit), an APNG's
 * frames, a WebP's image and frames beside its VP8X canvas, a JPEG's first start of frame however
 * it is reached. Every size is read before anything is decoded; a request's images are capped in
 * number and in pixels; a same-origin image is read without cookies and without following a
 * redirect (item 3). The images are written at test time (tests/test-images.ts).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  IMAGE_COUNT_LIMIT,
  IMAGE_PIXEL_LIMIT,
  IMAGE_TOTAL_PIXEL_LIMIT,
  readImages,
  type ImageDeps,
} from '../../../src/api/images';
import { OpenAIError } from '../../../src/protocol/errors';
import type { InputImage } from '../../../src/protocol/types';
import { parseChatRequest } from '../../../src/protocol/validate';
import {
  apngClaiming,
  dataUrl,
  gif,
  imageMessage,
  jpegFrame,
  jpegWithFakeFrame,
  solidPng,
  webpClaiming,
} from '../../test-images';
import { chatRequest, echoStack, URL_BASE } from '../helpers';

const ORIGIN = URL_BASE;

async function errorOf(run: () => Promise<unknown>): Promise<OpenAIError> {
  const err = await run().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OpenAIError);
  return err as OpenAIError;
}

async function read(messages: unknown[], deps: Partial<ImageDeps> = {}) {
  const request = parseChatRequest({ model: 'hearth/echo', messages });
  await readImages(request, { origin: ORIGIN, ...deps });
  return request;
}

/** The image the first message's image part became. */
async function measured(bytes: Uint8Array, deps: Partial<ImageDeps> = {}) {
  const request = await read([imageMessage('x', dataUrl(bytes))], deps);
  return request.messages[0]?.parts?.[1] as { source: InputImage };
}

/** Expects `bytes` refused as `w`×`h` pixels, over the limit, before any decode, quickly. */
async function refusedUndecoded(bytes: Uint8Array, w: number, h: number) {
  const decode = vi.fn(async () => undefined);
  const started = performance.now();
  const err = await errorOf(() => read([imageMessage('x', dataUrl(bytes))], { decode }));
  expect(performance.now() - started).toBeLessThan(500);
  expect(err.status).toBe(400);
  expect(err.code).toBe('invalid_value');
  expect(err.param).toBe('messages[0].content[1]');
  expect(err.message).toContain(`${w}×${h} pixels`);
  expect(err.message).toContain(`${IMAGE_PIXEL_LIMIT / 1e6} megapixels`);
  expect(decode).not.toHaveBeenCalled();
}

describe('a GIF is measured by its frames, not its header', () => {
  it('a 1×1 header over a 64×48 frame is 64×48', async () => {
    const bytes = gif({ width: 1, height: 1 }, [{ width: 64, height: 48 }]);
    const part = await measured(bytes);
    expect(part.source).toMatchObject({ type: 'image/gif', width: 64, height: 48 });
  });

  it('and the echo engine says so', async () => {
    const stack = echoStack();
    try {
      const bytes = gif({ width: 1, height: 1 }, [{ width: 64, height: 48 }]);
      const response = await stack.api.fetch(
        chatRequest({ model: 'hearth/echo', messages: [imageMessage('what is', dataUrl(bytes))] }),
      );
      expect(response.status).toBe(200);
      const body = (await response.json()) as { choices: { message: { content: string } }[] };
      expect(body.choices[0]?.message.content).toBe(
        `what is\n[image: image/gif 64×48, ${bytes.byteLength} bytes]`,
      );
    } finally {
      stack.close();
    }
  });

  it('a 1×1 header over a 16000×16000 frame is refused fast, never decoded', async () => {
    await refusedUndecoded(
      gif({ width: 1, height: 1 }, [{ width: 16000, height: 16000, filled: false }]),
      16000,
      16000,
    );
  });

  it('a frame placed far off a small screen counts to its far edge', async () => {
    await refusedUndecoded(
      gif({ width: 64, height: 48 }, [{ x: 10000, y: 10000, width: 1, height: 1, filled: false }]),
      10001,
      10001,
    );
  });

  it('a later frame larger than the screen counts as well', async () => {
    const bytes = gif({ width: 8, height: 8 }, [
      { width: 8, height: 8 },
      { width: 16000, height: 16000, filled: false },
    ]);
    await refusedUndecoded(bytes, 16000, 16000);
  });

  it('a GIF with no frame is refused as damaged, naming the part', async () => {
    const bytes = gif({ width: 7, height: 5 }, []);
    const err = await errorOf(() => read([imageMessage('x', dataUrl(bytes))]));
    expect(err.status).toBe(400);
    expect(err.param).toBe('messages[0].content[1]');
    expect(err.message).toContain('image/gif');
  });
});

describe('the other formats are measured by what is decoded', () => {
  it('an APNG frame beyond its 1×1 header is refused before decoding', async () => {
    const png = apngClaiming(solidPng(1, 1, [0, 0, 0]), { width: 16000, height: 16000 });
    await refusedUndecoded(png, 16000, 16000);
  });

  it('a WebP image larger than its 1×1 VP8X canvas is refused before decoding', async () => {
    const webp = webpClaiming({ width: 1, height: 1 }, { image: { width: 16000, height: 16000 } });
    await refusedUndecoded(webp, 16000, 16000);
  });

  it('an animated WebP frame beyond its canvas counts to its far edge', async () => {
    const webp = webpClaiming(
      { width: 1, height: 1 },
      { frame: { x: 10000, y: 10000, width: 2, height: 2 } },
    );
    await refusedUndecoded(webp, 10002, 10002);
  });

  it("a JPEG's frame after a fill byte is the frame, wherever another reader lands", async () => {
    await refusedUndecoded(
      jpegWithFakeFrame({ width: 16000, height: 16000 }, { width: 1, height: 1 }),
      16000,
      16000,
    );
  });

  it('a JPEG of any kind of frame (here lossless, SOF3) is measured by it', async () => {
    const part = await measured(jpegFrame({ width: 40, height: 30 }, { marker: 0xc3 }));
    expect(part.source).toMatchObject({ type: 'image/jpeg', width: 40, height: 30 });
  });

  it('an image that decodes larger than it was measured is refused', async () => {
    const err = await errorOf(() =>
      read([imageMessage('x', dataUrl(solidPng(2, 2, [0, 0, 0])))], {
        decode: async () => ({ width: 9000, height: 9000 }),
      }),
    );
    expect(err.status).toBe(400);
    expect(err.param).toBe('messages[0].content[1]');
    expect(err.message).toContain('9000×9000');
  });
});

describe("a request's images are capped in number and in pixels", () => {
  it(`${IMAGE_COUNT_LIMIT + 1} images are refused, naming the one over, before any is read`, async () => {
    const one = dataUrl(solidPng(1, 1, [0, 0, 0]));
    const decode = vi.fn(async () => undefined);
    const content = Array.from({ length: IMAGE_COUNT_LIMIT + 1 }, () => ({
      type: 'image_url',
      image_url: { url: one },
    }));
    const err = await errorOf(() => read([{ role: 'user', content }], { decode }));
    expect(err.status).toBe(400);
    expect(err.code).toBe('invalid_value');
    expect(err.param).toBe(`messages[0].content[${IMAGE_COUNT_LIMIT}]`);
    expect(err.message).toContain(`${IMAGE_COUNT_LIMIT} images`);
    expect(decode).not.toHaveBeenCalled();
  });

  it(`images of more than ${IMAGE_TOTAL_PIXEL_LIMIT / 1e6} megapixels in all are refused before the one over is decoded`, async () => {
    // 36 megapixels each (under the limit of one image): the third passes the total.
    const big = dataUrl(gif({ width: 6000, height: 6000 }, [{ width: 1, height: 1 }]));
    const decode = vi.fn(async () => undefined);
    const err = await errorOf(() =>
      read(
        [
          imageMessage('a', big),
          { role: 'assistant', content: 'ok' },
          imageMessage('b', big),
          imageMessage('c', big),
        ],
        { decode },
      ),
    );
    expect(err.status).toBe(400);
    expect(err.code).toBe('invalid_value');
    expect(err.param).toBe('messages[3].content[1]');
    expect(err.message).toContain(`${IMAGE_TOTAL_PIXEL_LIMIT / 1e6} megapixels`);
    expect(decode).toHaveBeenCalledTimes(2);
  });
});

describe('a URL of this origin', () => {
  afterEach(() => vi.restoreAllMocks());

  it('is fetched without cookies and without following a redirect', async () => {
    const png = solidPng(1, 1, [1, 2, 3]);
    const fetch = vi.fn(async (_url: string, _init?: RequestInit) => new Response(png));
    await read([imageMessage('a', '/photos/a.png')], { fetch });
    expect(fetch).toHaveBeenCalledWith(`${ORIGIN}/photos/a.png`, {
      redirect: 'error',
      credentials: 'omit',
    });
  });

  it('that redirects is refused with a 400 naming its url, the other place never asked', async () => {
    const asked: string[] = [];
    // A fetch that returns the redirect itself (as `redirect: 'manual'` would).
    const fetch = async (url: string) => {
      asked.push(url);
      return new Response(null, { status: 302, headers: { location: 'https://elsewhere.test/x' } });
    };
    const err = await errorOf(() => read([imageMessage('a', '/photos/a.png')], { fetch }));
    expect(err.status).toBe(400);
    expect(err.code).toBe('invalid_value');
    expect(err.param).toBe('messages[0].content[1].image_url.url');
    expect(err.message).toContain('redirect');
    expect(asked).toEqual([`${ORIGIN}/photos/a.png`]);
  });

  it('whose fetch refuses a redirect (as the platform does) is a 400 that says so', async () => {
    const fetch = async () => {
      throw new TypeError('Failed to fetch: redirect mode is "error"');
    };
    const err = await errorOf(() => read([imageMessage('a', '/photos/a.png')], { fetch }));
    expect(err.status).toBe(400);
    expect(err.param).toBe('messages[0].content[1].image_url.url');
    expect(err.message).toContain('redirect');
  });

  it('whose answer followed a redirect anyway is refused, its body unread', async () => {
    const png = solidPng(1, 1, [1, 2, 3]);
    const fetch = async () => {
      const response = new Response(png);
      Object.defineProperty(response, 'redirected', { value: true });
      return response;
    };
    const err = await errorOf(() => read([imageMessage('a', '/photos/a.png')], { fetch }));
    expect(err.status).toBe(400);
    expect(err.param).toBe('messages[0].content[1].image_url.url');
    expect(err.message).toContain('redirect');
  });
});
