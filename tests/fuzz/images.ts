/**
 * @module
 * Fuzz cases for images whose header and frames disagree (issue 46), and a request's caps on
 * images: an image's size is what is decoded, read off every frame before anything decodes it
 * (docs/api.md, Images). A GIF whose 1×1 header sits over a 64×48 frame is 64×48, and the echo
 * engine says so; one over a 16000×16000 frame, a frame placed far off its screen, a later frame
 * larger than it, an APNG frame or a WebP image beyond its canvas, a JPEG frame that another
 * reader misses are 400 `invalid_value` naming the part, before a decode. The images are written
 * at test time (tests/test-images.ts).
 */
import type { BodySpec, Expectation, Rng } from './generate';
import { echoExpectation } from './oracle';
import {
  apngClaiming,
  dataUrl,
  gif,
  jpegWithFakeFrame,
  solidPng,
  webpClaiming,
} from '../test-images';

/** One case, as generate.ts completes it. */
export interface ImageCase {
  kind: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: BodySpec | null;
  expect: Expectation;
}

const CHAT = 'v1/openai/chat/completions';
const KEYED = { authorization: 'Bearer k', 'content-type': 'application/json' };
/** docs/api.md, Images: the caps on a request's images. */
const COUNT_LIMIT = 32;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const imagePart = (bytes: Uint8Array) => ({
  type: 'image_url',
  image_url: { url: dataUrl(bytes) },
});

/**
 * A request whose last message is the user's `parts` (a system message before it, or not), and
 * where those parts stand (`messages[i].content`).
 */
function request(rng: Rng, parts: Json[]): { body: Record<string, Json>; at: string } {
  const messages: Json[] = rng.chance(0.5) ? [{ role: 'system', content: 'be brief' }] : [];
  const at = `messages[${messages.length}].content`;
  messages.push({ role: 'user', content: parts });
  const body: Record<string, Json> = { model: 'hearth/echo', messages };
  if (rng.chance(0.5)) {
    body.stream = true;
    if (rng.chance(0.5)) body.stream_options = { include_usage: rng.chance(0.5) };
  }
  return { body, at };
}

const json = (body: Record<string, Json>): BodySpec => ({ parts: [JSON.stringify(body)] });

/** `bytes`, after an optional text part, refused as `invalid_value` naming its part. */
function refused(kind: string, bytes: () => Uint8Array) {
  return (rng: Rng): ImageCase => {
    const text = rng.chance(0.5);
    const { body, at } = request(rng, [
      ...(text ? [{ type: 'text', text: 'what is this?' }] : []),
      imagePart(bytes()),
    ]);
    return {
      kind: `image:${kind}`,
      method: 'POST',
      path: CHAT,
      headers: KEYED,
      body: json(body),
      expect: { status: 400, error: { code: 'invalid_value', param: `${at}[${text ? 1 : 0}]` } },
    };
  };
}

/** Each case once per run (the first part of every run); the rest at random, as any mutation. */
export function imageCases(): ((rng: Rng) => ImageCase)[] {
  return [
    // A 1×1 header over a 64×48 frame: 64×48 (Chromium decodes it so), which the echo engine says.
    (rng) => {
      const bytes = gif({ width: 1, height: 1 }, [{ width: 64, height: 48 }]);
      const { body } = request(rng, [{ type: 'text', text: 'what is' }, imagePart(bytes)]);
      const seen = structuredClone(body);
      const messages = seen.messages as { content: Json }[];
      (messages.at(-1) as { content: Json }).content =
        `what is\n[image: image/gif 64×48, ${bytes.byteLength} bytes]`;
      return {
        kind: 'image:gif-frame-larger-than-header',
        method: 'POST',
        path: CHAT,
        headers: KEYED,
        body: json(body),
        expect: { status: 200, reply: echoExpectation(seen, 'hearth/echo') },
      };
    },
    refused('gif-huge-frame-under-1x1-header', () =>
      gif({ width: 1, height: 1 }, [{ width: 16000, height: 16000, filled: false }]),
    ),
    refused('gif-frame-far-off-screen', () =>
      gif({ width: 64, height: 48 }, [{ x: 10000, y: 10000, width: 1, height: 1, filled: false }]),
    ),
    refused('gif-later-frame-huge', () =>
      gif({ width: 8, height: 8 }, [
        { width: 8, height: 8 },
        { width: 16000, height: 16000, filled: false },
      ]),
    ),
    refused('apng-frame-beyond-canvas', () =>
      apngClaiming(solidPng(1, 1, [0, 0, 0]), { width: 16000, height: 16000 }),
    ),
    refused('webp-image-beyond-canvas', () =>
      webpClaiming({ width: 1, height: 1 }, { image: { width: 16000, height: 16000 } }),
    ),
    refused('jpeg-frame-after-fill-byte', () =>
      jpegWithFakeFrame({ width: 16000, height: 16000 }, { width: 1, height: 1 }),
    ),
    // One image more than a request may carry: refused naming it, before any is read.
    (rng) => {
      const one = imagePart(gif({ width: 1, height: 1 }, [{ width: 1, height: 1 }]));
      const { body, at } = request(
        rng,
        Array.from({ length: COUNT_LIMIT + 1 }, () => one),
      );
      return {
        kind: 'image:one-too-many',
        method: 'POST',
        path: CHAT,
        headers: KEYED,
        body: json(body),
        expect: { status: 400, error: { code: 'invalid_value', param: `${at}[${COUNT_LIMIT}]` } },
      };
    },
    // Over 100 megapixels in all (50 + 1 pixel + 50): the third refused before it is decoded.
    // Named `size:` so that it runs once a run (generate.ts `BIG`): the first is decoded.
    (rng) => {
      const most = gif({ width: 10000, height: 5000 }, [{ width: 1, height: 1 }]);
      const dot = gif({ width: 1, height: 1 }, [{ width: 1, height: 1 }]);
      const { body, at } = request(rng, [imagePart(most), imagePart(dot), imagePart(most)]);
      return {
        kind: 'size:image-pixels-in-all',
        method: 'POST',
        path: CHAT,
        headers: KEYED,
        body: json(body),
        expect: { status: 400, error: { code: 'invalid_value', param: `${at}[2]` } },
      };
    },
  ];
}
