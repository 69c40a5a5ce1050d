/**
 * The embeddings endpoint's own logic: parsing the body, which models may answer, cutting and
 * encoding vectors, the response body; then the whole endpoint through the router with a fake
 * backend (routes, auth, the order of checks, a long batch, a host lost on the way).
 */
import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { Channel } from '../../../src/bridge/channel';
import {
  HostLostError,
  type ChatBackend,
  type ChatEvent,
  type ChatOptions,
} from '../../../src/protocol/host/backend';
import {
  assertEmbeddingModel,
  embeddingBody,
  parseEmbeddingRequest,
  type EmbeddingCall,
} from '../../../src/api/embeddings';
import { OpenAIError } from '../../../src/protocol/errors';
import {
  ECHO_MODEL,
  modelObject,
  staticModelDirectory,
  type ModelInfo,
} from '../../../src/models/models';
import { createApi, type ApiOptions } from '../../../src/api/router';
import type { EmbeddingRequest } from '../../../src/protocol/types';
import {
  base64Vector,
  MAX_EMBEDDING_INPUTS,
  normalizeInPlace,
  shorten,
} from '../../../src/protocol/vectors';
import { chatRequest, getRequest, sleep } from '../helpers';

/** An embedding model with 4-dimensional vectors, trained to be cut to 2 (Matryoshka). */
const EMBEDDER: ModelInfo = {
  ...ECHO_MODEL,
  id: 'acme/embed-GGUF:Q8_0',
  owned_by: 'acme',
  context_window: 512,
  price: { prompt: 0.001, completion: 0.5 },
  embedding: { dimensions: 4, pooling: 'mean', normalized: true, matryoshka: [2] },
};
/** An embedding model that was not trained to give shorter vectors. */
const PLAIN_EMBEDDER: ModelInfo = {
  ...EMBEDDER,
  id: 'acme/plain-embed-GGUF:Q8_0',
  embedding: { dimensions: 4, pooling: 'cls', normalized: true, matryoshka: [] },
};
/** An embedding model whose length is not known before it loads. */
const UNSIZED_EMBEDDER: ModelInfo = {
  ...EMBEDDER,
  id: 'acme/unsized-GGUF:Q8_0',
  embedding: { dimensions: null, pooling: 'mean', normalized: true, matryoshka: [] },
};
/** A chat model. */
const CHAT: ModelInfo = ECHO_MODEL;

/** Throws unless `fn` throws an `OpenAIError`; returns it. */
function refusal(fn: () => unknown): OpenAIError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(OpenAIError);
    return err as OpenAIError;
  }
  throw new Error('expected a refusal');
}

const parse = (extra: Record<string, unknown>) =>
  parseEmbeddingRequest({ model: EMBEDDER.id, input: 'hello', ...extra });

const norm = (v: ArrayLike<number>) => Math.hypot(...Array.from(v));

describe('parseEmbeddingRequest: the input shapes', () => {
  it('turns a single string into a list of one, float encoding and no dimensions by default', () => {
    expect(parseEmbeddingRequest({ model: EMBEDDER.id, input: 'hello' })).toEqual({
      request: { model: EMBEDDER.id, input: ['hello'] },
      encoding: 'float',
      dimensions: undefined,
    });
  });

  it('keeps a list of strings in its order', () => {
    expect(parse({ input: ['a', 'b', 'c'] }).request.input).toEqual(['a', 'b', 'c']);
  });

  it('turns one list of token ids into a list of one input', () => {
    expect(parse({ input: [1, 2, 3] }).request.input).toEqual([[1, 2, 3]]);
  });

  it('keeps a list of token-id lists in its order', () => {
    expect(parse({ input: [[1, 2], [0], [7, 8, 9]] }).request.input).toEqual([
      [1, 2],
      [0],
      [7, 8, 9],
    ]);
  });

  it('takes one token-id list longer than 2048 ids as one input (the count limit is on inputs)', () => {
    const ids = Array.from({ length: 3000 }, (_, i) => i);
    expect(parse({ input: ids }).request.input).toEqual([ids]);
  });

  it('takes encoding_format base64 and float, and dimensions as given', () => {
    expect(parse({ encoding_format: 'base64' }).encoding).toBe('base64');
    expect(parse({ encoding_format: 'float' }).encoding).toBe('float');
    expect(parse({ dimensions: 2 }).dimensions).toBe(2);
  });

  it('treats null encoding_format, dimensions and user as absent', () => {
    expect(parse({ encoding_format: null, dimensions: null, user: null })).toEqual({
      request: { model: EMBEDDER.id, input: ['hello'] },
      encoding: 'float',
      dimensions: undefined,
    });
  });

  it('ignores user and unknown fields, and passes neither on', () => {
    expect(parse({ user: 'someone', frobnicate: { a: 1 }, temperature: 2 })).toEqual({
      request: { model: EMBEDDER.id, input: ['hello'] },
      encoding: 'float',
      dimensions: undefined,
    });
  });

  it(`accepts ${MAX_EMBEDDING_INPUTS} inputs, as strings and as token-id lists`, () => {
    const input = Array.from({ length: MAX_EMBEDDING_INPUTS }, (_, i) => `t${i}`);
    expect(parse({ input }).request.input).toHaveLength(2048);
    const ids = Array.from({ length: MAX_EMBEDDING_INPUTS }, (_, i) => [i]);
    expect(parse({ input: ids }).request.input).toHaveLength(2048);
  });
});

describe('parseEmbeddingRequest: refusals, each with its code and param', () => {
  it.each<[string, Record<string, unknown>, string, string | null]>([
    ['a missing model', { model: undefined }, 'missing_field', 'model'],
    ['a null model', { model: null }, 'missing_field', 'model'],
    ['an empty model', { model: '' }, 'invalid_value', 'model'],
    ['a model that is a number', { model: 5 }, 'invalid_type', 'model'],
    ['a missing input', { input: undefined }, 'missing_field', 'input'],
    ['a null input', { input: null }, 'missing_field', 'input'],
    ['an empty string', { input: '' }, 'invalid_value', 'input'],
    ['an empty array', { input: [] }, 'invalid_value', 'input'],
    ['an empty string in a list', { input: ['a', ''] }, 'invalid_value', 'input[1]'],
    ['an empty token list in a list', { input: [[1], []] }, 'invalid_value', 'input[1]'],
    ['a negative token id', { input: [1, -1] }, 'invalid_value', 'input[1]'],
    ['a fractional token id', { input: [1.5] }, 'invalid_value', 'input[0]'],
    ['a negative id in a nested list', { input: [[1], [2, -3]] }, 'invalid_value', 'input[1][1]'],
    ['a number as input', { input: 5 }, 'invalid_type', 'input'],
    ['an object as input', { input: { text: 'a' } }, 'invalid_type', 'input'],
    ['strings mixed with a number', { input: ['a', 1] }, 'invalid_type', 'input[1]'],
    ['token ids mixed with a string', { input: [1, 'a'] }, 'invalid_type', 'input[1]'],
    ['token lists mixed with a string', { input: [[1], 'a'] }, 'invalid_type', 'input[1]'],
    ['strings mixed with a token list', { input: ['a', [1]] }, 'invalid_type', 'input[1]'],
    ['a null item in a list', { input: ['a', null] }, 'invalid_type', 'input[1]'],
    ['an unknown encoding_format', { encoding_format: 'hex' }, 'invalid_value', 'encoding_format'],
    ['a numeric encoding_format', { encoding_format: 1 }, 'invalid_type', 'encoding_format'],
    ['dimensions 0', { dimensions: 0 }, 'invalid_value', 'dimensions'],
    ['negative dimensions', { dimensions: -4 }, 'invalid_value', 'dimensions'],
    ['fractional dimensions', { dimensions: 1.5 }, 'invalid_value', 'dimensions'],
    ['dimensions as a string', { dimensions: '2' }, 'invalid_type', 'dimensions'],
    ['a user that is not a string', { user: 5 }, 'invalid_type', 'user'],
  ])('refuses %s with 400 %s naming %s', (_what, extra, code, param) => {
    const error = refusal(() => parse(extra));
    expect(error.status).toBe(400);
    expect(error.code).toBe(code);
    expect(error.param).toBe(param);
  });

  it(`refuses ${MAX_EMBEDDING_INPUTS + 1} inputs with 400 invalid_value naming input`, () => {
    const input = Array.from({ length: MAX_EMBEDDING_INPUTS + 1 }, () => 'x');
    const error = refusal(() => parse({ input }));
    expect(error).toMatchObject({ status: 400, code: 'invalid_value', param: 'input' });
    expect(error.message).toContain('2048');
    const ids = Array.from({ length: MAX_EMBEDDING_INPUTS + 1 }, () => [1]);
    expect(refusal(() => parse({ input: ids }))).toMatchObject({
      code: 'invalid_value',
      param: 'input',
    });
  });

  it('refuses a body that is a string, a number or null with 400 invalid_type and no param', () => {
    for (const body of ['text', 7, null]) {
      expect(refusal(() => parseEmbeddingRequest(body))).toMatchObject({
        status: 400,
        code: 'invalid_type',
        param: null,
      });
    }
  });

  it('refuses an array body as the wrong type for the body, as the chat endpoint does', () => {
    expect(refusal(() => parseEmbeddingRequest([]))).toMatchObject({
      status: 400,
      code: 'invalid_type',
      param: null,
    });
  });
});

describe('assertEmbeddingModel', () => {
  it('refuses a chat model with 400 invalid_value naming model', () => {
    const error = refusal(() => assertEmbeddingModel(CHAT, undefined));
    expect(error).toMatchObject({ status: 400, code: 'invalid_value', param: 'model' });
    expect(error.message).toContain(CHAT.id);
  });

  it('accepts an embedding model without dimensions, and with its own length', () => {
    expect(() => assertEmbeddingModel(EMBEDDER, undefined)).not.toThrow();
    expect(() => assertEmbeddingModel(EMBEDDER, 4)).not.toThrow();
    expect(() => assertEmbeddingModel(PLAIN_EMBEDDER, 4)).not.toThrow();
  });

  it('accepts a Matryoshka model’s trained lengths only, else 400 invalid_value naming dimensions', () => {
    expect(() => assertEmbeddingModel(EMBEDDER, 2)).not.toThrow();
    for (const dimensions of [1, 3, 5, 768]) {
      expect(refusal(() => assertEmbeddingModel(EMBEDDER, dimensions))).toMatchObject({
        status: 400,
        code: 'invalid_value',
        param: 'dimensions',
      });
    }
  });

  it('refuses dimensions on a model not trained for them with 400 unsupported_parameter', () => {
    for (const dimensions of [2, 3, 8]) {
      const error = refusal(() => assertEmbeddingModel(PLAIN_EMBEDDER, dimensions));
      expect(error).toMatchObject({
        status: 400,
        code: 'unsupported_parameter',
        param: 'dimensions',
      });
      expect(error.message).toContain('4 dimensions');
    }
  });

  it('refuses dimensions with unsupported_parameter on a non-Matryoshka model whose length is not known yet', () => {
    expect(() => assertEmbeddingModel(UNSIZED_EMBEDDER, undefined)).not.toThrow();
    expect(refusal(() => assertEmbeddingModel(UNSIZED_EMBEDDER, 4))).toMatchObject({
      code: 'unsupported_parameter',
      param: 'dimensions',
    });
  });
});

describe('vectors', () => {
  it('normalizeInPlace scales to length 1 in place and leaves a zero vector zero', () => {
    const v = new Float32Array([3, 4]);
    expect(normalizeInPlace(v)).toBe(v);
    expect(Array.from(v)).toEqual([Math.fround(0.6), Math.fround(0.8)]);
    expect(Array.from(normalizeInPlace(new Float32Array(3)))).toEqual([0, 0, 0]);
  });

  it('shorten keeps the first values, with length 1 again, and leaves the original alone', () => {
    const original = new Float32Array([0.5, -0.5, 0.5, 0.5]);
    const cut = shorten(original, 2);
    expect(cut).toHaveLength(2);
    expect(norm(cut)).toBeCloseTo(1, 6);
    expect(Array.from(original)).toEqual([0.5, -0.5, 0.5, 0.5]);
  });

  it('shorten equals truncating and dividing by the norm by hand', () => {
    const values = [0.1, -0.7, 0.3, 0.2, 0.6, -0.05];
    for (const dims of [1, 2, 3, 5]) {
      const head = values.slice(0, dims);
      const n = Math.hypot(...head);
      const manual = head.map((x) => x / n);
      const cut = shorten(new Float32Array(values), dims);
      expect(cut).toHaveLength(dims);
      expect(norm(cut)).toBeCloseTo(1, 6);
      for (const [i, x] of manual.entries()) expect(cut[i]).toBeCloseTo(x, 6);
    }
  });

  it('base64Vector decodes back to the same float32 values, little-endian', () => {
    const v = new Float32Array([1, -2.5, 0.1, Math.PI, -0, 1e-30, 3.4e38]);
    const bytes = Uint8Array.from(atob(base64Vector(v)), (c) => c.charCodeAt(0));
    expect(bytes).toHaveLength(v.length * 4);
    const view = new DataView(bytes.buffer);
    const back = Array.from({ length: v.length }, (_, i) => view.getFloat32(i * 4, true));
    expect(back).toEqual(Array.from(v));
    // 1.0 as float32 is 00 00 80 3f, little-endian.
    expect(Array.from(bytes.subarray(0, 4))).toEqual([0x00, 0x00, 0x80, 0x3f]);
  });

  it('base64Vector matches Node’s Buffer of the Float32Array’s bytes on this little-endian machine', () => {
    expect(new Uint8Array(new Uint16Array([1]).buffer)[0]).toBe(1);
    const values = Array.from({ length: 1000 }, (_, i) => Math.sin(i) * 10 ** ((i % 9) - 4));
    const v = new Float32Array(values);
    expect(base64Vector(v)).toBe(Buffer.from(v.buffer).toString('base64'));
    expect(base64Vector(new Float32Array(0))).toBe('');
  });

  it('base64Vector encodes a vector longer than one 32 KiB slice whole', () => {
    const v = Float32Array.from({ length: 20_000 }, (_, i) => i / 7);
    expect(base64Vector(v)).toBe(Buffer.from(v.buffer).toString('base64'));
  });
});

describe('embeddingBody', () => {
  const unit = (...xs: number[]) => normalizeInPlace(new Float32Array(xs));
  const result = (vectors: Float32Array[], prompt_tokens = 10) =>
    ({ type: 'embeddings', vectors, prompt_tokens }) as const;
  const call = (extra: Partial<EmbeddingCall> = {}): EmbeddingCall => ({
    request: { model: EMBEDDER.id, input: ['a', 'b'] },
    encoding: 'float',
    dimensions: undefined,
    ...extra,
  });

  it('lists one embedding per vector, in order, with its index, the model and usage priced by prompt tokens', () => {
    const a = unit(1, 2, 3, 4);
    const b = unit(4, 3, 2, 1);
    expect(embeddingBody(call(), EMBEDDER, result([a, b], 10))).toEqual({
      object: 'list',
      data: [
        { object: 'embedding', index: 0, embedding: Array.from(a) },
        { object: 'embedding', index: 1, embedding: Array.from(b) },
      ],
      model: EMBEDDER.id,
      usage: { prompt_tokens: 10, total_tokens: 10, estimated_cost: 10 * 0.001 },
    });
  });

  it('writes base64 of the little-endian float32 bytes when asked', () => {
    const a = unit(1, 2, 3, 4);
    const body = embeddingBody(call({ encoding: 'base64' }), EMBEDDER, result([a])) as {
      data: { embedding: string }[];
    };
    expect(body.data[0]?.embedding).toBe(Buffer.from(a.buffer).toString('base64'));
  });

  it('cuts each vector to dimensions and normalises it again, in float and base64 alike', () => {
    const a = unit(1, 2, 3, 4);
    const b = unit(-4, 3, 2, 1);
    const float = embeddingBody(call({ dimensions: 2 }), EMBEDDER, result([a, b])) as {
      data: { embedding: number[] }[];
    };
    expect(float.data.map((d) => d.embedding)).toEqual([
      Array.from(shorten(a, 2)),
      Array.from(shorten(b, 2)),
    ]);
    for (const d of float.data) expect(norm(d.embedding)).toBeCloseTo(1, 6);
    const base64 = embeddingBody(
      call({ dimensions: 2, encoding: 'base64' }),
      EMBEDDER,
      result([a, b]),
    ) as { data: { embedding: string }[] };
    expect(base64.data[1]?.embedding).toBe(base64Vector(shorten(b, 2)));
  });

  it('leaves a vector whole when dimensions is its own length or more', () => {
    const a = new Float32Array([0.5, 0.5, 0.5, 0.5]);
    for (const dimensions of [4, 9]) {
      const body = embeddingBody(call({ dimensions }), EMBEDDER, result([a])) as {
        data: { embedding: number[] }[];
      };
      expect(body.data[0]?.embedding).toEqual([0.5, 0.5, 0.5, 0.5]);
    }
  });

  it('prices usage by the model’s prompt price, and at 0 on a free model', () => {
    const body = embeddingBody(call(), PLAIN_EMBEDDER, result([unit(1)], 7)) as {
      usage: unknown;
    };
    expect(body.usage).toEqual({ prompt_tokens: 7, total_tokens: 7, estimated_cost: 0.007 });
    const free = { ...EMBEDDER, price: { prompt: 0, completion: 0 } };
    expect((embeddingBody(call(), free, result([unit(1)], 7)) as { usage: unknown }).usage).toEqual(
      { prompt_tokens: 7, total_tokens: 7, estimated_cost: 0 },
    );
  });
});

describe('modelObject of an embedding model', () => {
  it('adds embeddings: true and the dimensions, and nothing to a chat model', () => {
    expect(modelObject(EMBEDDER)).toMatchObject({ embeddings: true, dimensions: 4 });
    expect(modelObject(UNSIZED_EMBEDDER)).toMatchObject({ embeddings: true, dimensions: null });
    expect(modelObject(CHAT)).not.toHaveProperty('embeddings');
    expect(modelObject(CHAT)).not.toHaveProperty('dimensions');
  });
});

// ---------------------------------------------------------------------------------------------
// Through the router.

/** The vector a fake backend makes for input `i`: unit length, different for each input. */
function vectorFor(i: number): Float32Array {
  return normalizeInPlace(new Float32Array([i + 1, 1, 3 - i, 2]));
}

type EmbedScript = (
  request: EmbeddingRequest,
  signal: AbortSignal,
  call: number,
) => AsyncIterable<ChatEvent>;

/** Plays the script for each call, as the queue does: a channel, fed in the background. */
function embedBackend(script?: EmbedScript) {
  const calls: EmbeddingRequest[] = [];
  const signals: AbortSignal[] = [];
  const chats: unknown[] = [];
  const play: EmbedScript =
    script ??
    async function* (request) {
      yield { type: 'state', state: 'queued' };
      yield { type: 'state', state: 'running' };
      yield {
        type: 'embeddings',
        vectors: request.input.map((_, i) => vectorFor(i)),
        prompt_tokens: 3 * request.input.length,
      };
    };
  const backend: ChatBackend = {
    chat(request) {
      chats.push(request);
      const channel = new Channel<ChatEvent>();
      channel.fail(new OpenAIError('engine_error', 'no chat here'));
      return channel;
    },
    embed(request: EmbeddingRequest, { signal }: ChatOptions) {
      calls.push(request);
      signals.push(signal);
      const channel = new Channel<ChatEvent>();
      const n = calls.length;
      void (async () => {
        try {
          for await (const event of play(request, signal, n)) channel.push(event);
          channel.close();
        } catch (err) {
          channel.fail(err);
        }
      })();
      return channel;
    },
  };
  return { backend, calls, signals, chats };
}

function api(backend: ChatBackend, options: Partial<ApiOptions> = {}) {
  return createApi({
    backend,
    models: staticModelDirectory([CHAT, EMBEDDER, PLAIN_EMBEDDER]),
    ...options,
  });
}

const embedRequest = (body: unknown, init: Parameters<typeof chatRequest>[1] = {}) =>
  chatRequest(body, { path: '/v1/openai/embeddings', ...init });

interface EmbeddingsJson {
  object: string;
  data: { object: string; index: number; embedding: number[] | string }[];
  model: string;
  usage: { prompt_tokens: number; total_tokens: number; estimated_cost: number };
}

async function errorOf(response: Response) {
  expect(response.headers.get('content-type')).toBe('application/json');
  expect(response.headers.get('x-request-id')).toMatch(/\S/);
  const body = (await response.json()) as {
    error: { code: string; type: string; param: string | null; message: string };
  };
  return { status: response.status, ...body.error };
}

describe('POST /v1/openai/embeddings through the router', () => {
  it.each(['/v1/openai/embeddings', '/v1/embeddings'])(
    'answers %s with 200, one embedding per input in order, the model and usage',
    async (path) => {
      const { backend, calls } = embedBackend();
      const response = await api(backend).fetch(
        embedRequest({ model: EMBEDDER.id, input: ['one', 'two', 'three'] }, { path }),
      );
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json');
      expect(response.headers.get('x-request-id')).toMatch(/\S/);
      expect(await response.json()).toEqual({
        object: 'list',
        data: [0, 1, 2].map((index) => ({
          object: 'embedding',
          index,
          embedding: Array.from(vectorFor(index)),
        })),
        model: EMBEDDER.id,
        usage: { prompt_tokens: 9, total_tokens: 9, estimated_cost: 9 * 0.001 },
      });
      expect(calls).toEqual([{ model: EMBEDDER.id, input: ['one', 'two', 'three'] }]);
    },
  );

  it('answers base64 with a Matryoshka cut when asked', async () => {
    const { backend } = embedBackend();
    const response = await api(backend).fetch(
      embedRequest({ model: EMBEDDER.id, input: 'x', encoding_format: 'base64', dimensions: 2 }),
    );
    expect(response.status).toBe(200);
    const body = (await response.json()) as EmbeddingsJson;
    expect(body.data[0]?.embedding).toBe(
      Buffer.from(shorten(vectorFor(0), 2).buffer).toString('base64'),
    );
  });

  it('passes token-id inputs to the backend as lists of ids', async () => {
    const { backend, calls } = embedBackend();
    const response = await api(backend).fetch(
      embedRequest({ model: EMBEDDER.id, input: [5, 6, 7] }),
    );
    expect(response.status).toBe(200);
    expect(calls[0]?.input).toEqual([[5, 6, 7]]);
  });

  it('answers GET with 405 and allow: POST', async () => {
    const { backend } = embedBackend();
    for (const path of ['/v1/openai/embeddings', '/v1/embeddings']) {
      const response = await api(backend).fetch(getRequest(path));
      expect(response.headers.get('allow')).toBe('POST');
      expect(await errorOf(response)).toMatchObject({ status: 405, code: 'method_not_allowed' });
    }
  });

  it('answers a request without a key with 401 invalid_api_key, and does not embed', async () => {
    const { backend, calls } = embedBackend();
    const response = await api(backend).fetch(
      embedRequest({ model: EMBEDDER.id, input: 'x' }, { headers: { authorization: '' } }),
    );
    expect(await errorOf(response)).toMatchObject({ status: 401, code: 'invalid_api_key' });
    expect(calls).toHaveLength(0);
  });

  it('answers a body that is not JSON by its content type with 415', async () => {
    const { backend, calls } = embedBackend();
    const response = await api(backend).fetch(
      embedRequest('{"model":"acme/embed-GGUF:Q8_0","input":"x"}', {
        headers: { 'content-type': 'text/plain' },
      }),
    );
    expect(await errorOf(response)).toMatchObject({ status: 415, code: 'unsupported_media_type' });
    expect(calls).toHaveLength(0);
  });

  it('answers a body over the limit with 413 and malformed JSON with 400 invalid_json', async () => {
    const { backend } = embedBackend();
    const big = await api(backend, { bodyLimit: 64 }).fetch(
      embedRequest({ model: EMBEDDER.id, input: 'x'.repeat(100) }),
    );
    expect(await errorOf(big)).toMatchObject({ status: 413, code: 'request_too_large' });
    const bad = await api(backend).fetch(embedRequest('{"model":'));
    expect(await errorOf(bad)).toMatchObject({ status: 400, code: 'invalid_json' });
  });

  it('answers a refused field with 400 naming it, before looking up the model', async () => {
    const { backend, calls } = embedBackend();
    const response = await api(backend).fetch(
      embedRequest({ model: 'acme/nope', input: ['a', ''] }),
    );
    expect(await errorOf(response)).toMatchObject({
      status: 400,
      code: 'invalid_value',
      param: 'input[1]',
    });
    expect(calls).toHaveLength(0);
  });

  it('answers an unknown model with 404 model_not_found naming model', async () => {
    const { backend, calls } = embedBackend();
    const response = await api(backend).fetch(embedRequest({ model: 'acme/nope', input: 'x' }));
    expect(await errorOf(response)).toMatchObject({
      status: 404,
      code: 'model_not_found',
      param: 'model',
    });
    expect(calls).toHaveLength(0);
  });

  it('answers a chat model with 400 invalid_value naming model, and does not embed', async () => {
    const { backend, calls } = embedBackend();
    const response = await api(backend).fetch(embedRequest({ model: CHAT.id, input: 'x' }));
    expect(await errorOf(response)).toMatchObject({
      status: 400,
      code: 'invalid_value',
      param: 'model',
    });
    expect(calls).toHaveLength(0);
  });

  it('answers dimensions a model was not trained for with 400 naming dimensions', async () => {
    const { backend, calls } = embedBackend();
    const plain = await api(backend).fetch(
      embedRequest({ model: PLAIN_EMBEDDER.id, input: 'x', dimensions: 2 }),
    );
    expect(await errorOf(plain)).toMatchObject({
      status: 400,
      code: 'unsupported_parameter',
      param: 'dimensions',
    });
    const untrained = await api(backend).fetch(
      embedRequest({ model: EMBEDDER.id, input: 'x', dimensions: 3 }),
    );
    expect(await errorOf(untrained)).toMatchObject({
      status: 400,
      code: 'invalid_value',
      param: 'dimensions',
    });
    expect(calls).toHaveLength(0);
  });

  it('answers a chat request to the embedding model with 400 invalid_value naming model', async () => {
    const { backend, chats } = embedBackend();
    const response = await api(backend).fetch(
      chatRequest({ model: EMBEDDER.id, messages: [{ role: 'user', content: 'hi' }] }),
    );
    expect(await errorOf(response)).toMatchObject({
      status: 400,
      code: 'invalid_value',
      param: 'model',
    });
    expect(chats).toHaveLength(0);
  });

  it('answers with the device check’s error when the model is not ready, and does not embed', async () => {
    const { backend, calls } = embedBackend();
    const models = staticModelDirectory([EMBEDDER], {
      ready: async () => {
        throw new OpenAIError('engine_unavailable', 'no tab hosts the engine');
      },
    });
    const response = await api(backend, { models }).fetch(
      embedRequest({ model: EMBEDDER.id, input: 'x' }),
    );
    expect(await errorOf(response)).toMatchObject({ status: 503, code: 'engine_unavailable' });
    expect(calls).toHaveLength(0);
  });

  it('answers a backend’s 429 queue_full with 429 and retry-after', async () => {
    const { backend } = embedBackend(async function* () {
      yield* [];
      throw new OpenAIError('queue_full', 'full', { retryAfter: 5 });
    });
    const response = await api(backend).fetch(embedRequest({ model: EMBEDDER.id, input: 'x' }));
    expect(response.headers.get('retry-after')).toBe('5');
    expect(await errorOf(response)).toMatchObject({ status: 429, code: 'queue_full' });
  });

  it('answers an engine refusal before the vectors with its status, code and param', async () => {
    const { backend } = embedBackend(async function* () {
      yield { type: 'state', state: 'running' };
      throw new OpenAIError('context_length_exceeded', 'too long', { param: 'input[1]' });
    });
    const response = await api(backend).fetch(
      embedRequest({ model: EMBEDDER.id, input: ['a', 'b'] }),
    );
    expect(await errorOf(response)).toMatchObject({
      status: 400,
      code: 'context_length_exceeded',
      param: 'input[1]',
    });
  });

  it('answers 500 engine_error where the backend makes no embeddings', async () => {
    const { backend } = embedBackend();
    const chatOnly: ChatBackend = { chat: backend.chat.bind(backend) };
    const response = await api(chatOnly).fetch(embedRequest({ model: EMBEDDER.id, input: 'x' }));
    expect(await errorOf(response)).toMatchObject({ status: 500, code: 'engine_error' });
  });

  it('sends the status line at generating and the body once the vectors come', async () => {
    let sent = false;
    const { backend } = embedBackend(async function* (request) {
      yield { type: 'state', state: 'running' };
      yield { type: 'state', state: 'generating' };
      await sleep(30);
      sent = true;
      yield {
        type: 'embeddings',
        vectors: request.input.map((_, i) => vectorFor(i)),
        prompt_tokens: 4,
      };
    });
    const response = await api(backend).fetch(
      embedRequest({ model: EMBEDDER.id, input: ['a', 'b'] }),
    );
    // The status line went out before the vectors were made.
    expect(sent).toBe(false);
    expect(response.status).toBe(200);
    const body = (await response.json()) as EmbeddingsJson;
    expect(sent).toBe(true);
    expect(body.data.map((d) => d.embedding)).toEqual([
      Array.from(vectorFor(0)),
      Array.from(vectorFor(1)),
    ]);
    expect(body.usage.prompt_tokens).toBe(4);
  });

  it('runs the request again once when its host is lost after generating, and answers 200', async () => {
    const { backend, calls } = embedBackend(async function* (request, _signal, call) {
      yield { type: 'state', state: 'generating' };
      await sleep(5);
      if (call === 1) throw new HostLostError();
      yield {
        type: 'embeddings',
        vectors: request.input.map((_, i) => vectorFor(i)),
        prompt_tokens: 2,
      };
    });
    const response = await api(backend).fetch(
      embedRequest({ model: EMBEDDER.id, input: ['a', 'b'] }),
    );
    expect(response.status).toBe(200);
    const body = (await response.json()) as EmbeddingsJson;
    expect(body.data).toHaveLength(2);
    expect(body.data[1]?.embedding).toEqual(Array.from(vectorFor(1)));
    expect(calls).toHaveLength(2);
    expect(calls[1]).toEqual(calls[0]);
  });

  it('runs the request again once when its host is lost before anything came, and answers 200', async () => {
    const { backend, calls } = embedBackend(async function* (request, _signal, call) {
      yield { type: 'state', state: 'queued' };
      if (call === 1) throw new HostLostError();
      yield {
        type: 'embeddings',
        vectors: request.input.map((_, i) => vectorFor(i)),
        prompt_tokens: 1,
      };
    });
    const response = await api(backend).fetch(embedRequest({ model: EMBEDDER.id, input: 'a' }));
    expect(response.status).toBe(200);
    expect(((await response.json()) as EmbeddingsJson).data).toHaveLength(1);
    expect(calls).toHaveLength(2);
  });

  it('runs it again only once: a second lost host fails the request with 503 engine_unavailable', async () => {
    const { backend, calls } = embedBackend(async function* () {
      yield { type: 'state', state: 'queued' };
      throw new HostLostError();
    });
    const response = await api(backend).fetch(embedRequest({ model: EMBEDDER.id, input: 'a' }));
    expect(await errorOf(response)).toMatchObject({ status: 503, code: 'engine_unavailable' });
    expect(calls).toHaveLength(2);
  });

  it('aborts the backend’s signal when the client cancels the body of a long batch', async () => {
    const { backend, signals } = embedBackend(async function* (_request, signal) {
      yield { type: 'state', state: 'generating' };
      await new Promise((resolve) => signal.addEventListener('abort', resolve));
    });
    const response = await api(backend).fetch(embedRequest({ model: EMBEDDER.id, input: 'a' }));
    expect(response.status).toBe(200);
    await response.body?.cancel();
    expect(signals[0]?.aborted).toBe(true);
  });
});
