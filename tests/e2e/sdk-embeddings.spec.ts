/**
 * The Vercel AI SDK (`embed`, `embedMany` with `@ai-sdk/openai-compatible`) and LangChain's
 * `OpenAIEmbeddings` (`@langchain/openai`) in a page of the app, configured only with Hearth's
 * base URL, against the embedding fixture on llama.cpp. Its vectors are known in closed form
 * (`fixtureEmbedding`), so the tests compare numbers; a wrapper of the page's `fetch` records what
 * each library sends, so the tests also pin the request bodies Hearth has to accept.
 */
import { expect, type Page } from '@playwright/test';
import { fixtureEmbedding, fixtureEmbeddingTokens } from '../../scripts/fixture-gguf.mjs';
import { KEY, loadSdks } from './helpers';
import { endSuite, openSuitePage, test } from './warm-context';
import { ModelServer } from './model-server';

const MODEL = 'e2e/fixture-embed-GGUF:F32';

const server = new ModelServer();

/** Texts of the fixture's vocabulary (letters a-z and spaces). */
const TEXTS = ['the cat is on the mat', 'a dog', 'we do be in my room'];

/** What the fixture gives `text`, in closed form. */
const expected = (text: string) => fixtureEmbedding(fixtureEmbeddingTokens(text));

/** How many tokens the fixture's tokenizer makes of `texts`, all together. */
const tokens = (...texts: string[]) =>
  texts.reduce((n, text) => n + fixtureEmbeddingTokens(text).length, 0);

/** Largest absolute difference between two vectors of the same length. */
function maxDiff(a: readonly number[], b: readonly number[]): number {
  expect(a).toHaveLength(b.length);
  return Math.max(...a.map((x, i) => Math.abs(x - (b[i] ?? NaN))));
}

/** Expects `vectors` to be the closed-form vectors of `texts`, in order. */
function expectVectors(vectors: readonly (readonly number[])[], texts: readonly string[]): void {
  expect(vectors).toHaveLength(texts.length);
  for (const [i, text] of texts.entries()) {
    expect(maxDiff(vectors[i]!, expected(text))).toBeLessThan(1e-5);
  }
}

/** A request the page sent with `fetch`, as the recorder keeps it. */
interface Sent {
  url: string;
  method: string;
  authorization: string | null;
  contentType: string | null;
  body: unknown;
  status: number;
}

/**
 * Wraps the page's `fetch` so that every request to `/embeddings` is kept in `globalThis.sent`
 * (the libraries look `fetch` up when they make their clients or their calls, after this).
 */
function recordRequests(page: Page): Promise<void> {
  return page.evaluate(() => {
    const scope = globalThis as unknown as { sent: Sent[] };
    scope.sent = [];
    const original = globalThis.fetch;
    globalThis.fetch = async (input, init) => {
      const request = new Request(input, init);
      if (!new URL(request.url).pathname.endsWith('/embeddings')) return original(input, init);
      const body = await request.clone().text();
      const response = await original(request);
      scope.sent.push({
        url: request.url,
        method: request.method,
        authorization: request.headers.get('authorization'),
        contentType: request.headers.get('content-type'),
        body: JSON.parse(body) as unknown,
        status: response.status,
      });
      return response;
    };
  });
}

/** The requests to `/embeddings` recorded since the last call, and forgets them. */
function takeSent(page: Page): Promise<Sent[]> {
  return page.evaluate(() => {
    const scope = globalThis as unknown as { sent: Sent[] };
    const sent = scope.sent;
    scope.sent = [];
    return sent;
  });
}

test.describe('embedding libraries against the base URL, unchanged', () => {
  test.describe.configure({ mode: 'serial' });
  let page: Page;
  let endpoint: string;

  test.beforeAll(async ({ browser, warmContexts }, testInfo) => {
    test.setTimeout(120_000);
    page = await openSuitePage({ browser, warmContexts }, testInfo, server, loadSdks);
    const download = await page.evaluate(
      async ({ MODEL, KEY }) => {
        const response = await fetch(`v1/hearth/models/${MODEL}/download`, {
          method: 'POST',
          headers: KEY,
          body: JSON.stringify({ stream: false }),
        });
        return (await response.json()) as unknown;
      },
      { MODEL, KEY },
    );
    expect(download).toMatchObject({ model: MODEL, phase: 'done' });
    endpoint = await page.evaluate(() => new URL('v1/openai/embeddings', location.href).href);
    await recordRequests(page);
  });

  test.afterAll(async ({ warmContexts }) => {
    await endSuite(warmContexts);
    await server.stop();
  });

  test('the AI SDK’s embed gives the closed-form vector of one text, with usage equal to its token count', async () => {
    const text = TEXTS[0]!;
    const result = await page.evaluate(
      async ({ MODEL, text }) => {
        const { embed, createOpenAICompatible } = HearthSdks;
        const hearth = createOpenAICompatible({
          name: 'hearth',
          baseURL: new URL('v1/openai', location.href).href,
          apiKey: 'k',
        });
        const { embedding, usage } = await embed({
          model: hearth.embeddingModel(MODEL),
          value: text,
        });
        return { embedding, usage };
      },
      { MODEL, text },
    );
    expectVectors([result.embedding], [text]);
    expect(result.usage).toEqual({ tokens: tokens(text) });
    expect(await takeSent(page)).toEqual([
      {
        url: endpoint,
        method: 'POST',
        authorization: 'Bearer k',
        contentType: 'application/json',
        body: { model: MODEL, input: [text], encoding_format: 'float' },
        status: 200,
      },
    ]);
  });

  test('the AI SDK’s embedMany gives each text’s closed-form vector in order, from one request, with usage equal to the sum of token counts', async () => {
    const result = await page.evaluate(
      async ({ MODEL, TEXTS }) => {
        const { embedMany, createOpenAICompatible } = HearthSdks;
        const hearth = createOpenAICompatible({
          name: 'hearth',
          baseURL: new URL('v1/openai', location.href).href,
          apiKey: 'k',
        });
        const { embeddings, usage, values } = await embedMany({
          model: hearth.embeddingModel(MODEL),
          values: TEXTS,
        });
        return { embeddings, usage, values };
      },
      { MODEL, TEXTS },
    );
    expect(result.values).toEqual(TEXTS);
    expectVectors(result.embeddings, TEXTS);
    expect(result.usage).toEqual({ tokens: tokens(...TEXTS) });
    const sent = await takeSent(page);
    expect(sent.map((s) => [s.url, s.status, s.body])).toEqual([
      [endpoint, 200, { model: MODEL, input: TEXTS, encoding_format: 'float' }],
    ]);
  });

  test('LangChain’s embedQuery gives the closed-form vector, sending one string and asking for base64 (the openai SDK’s default)', async () => {
    const text = TEXTS[0]!;
    const vector = await page.evaluate(
      async ({ MODEL, text }) => {
        const embeddings = new HearthSdks.OpenAIEmbeddings({
          model: MODEL,
          apiKey: 'k',
          configuration: { baseURL: new URL('v1/openai', location.href).href },
        });
        return await embeddings.embedQuery(text);
      },
      { MODEL, text },
    );
    expectVectors([vector], [text]);
    expect(await takeSent(page)).toEqual([
      {
        url: endpoint,
        method: 'POST',
        authorization: 'Bearer k',
        contentType: 'application/json',
        body: { model: MODEL, input: text, encoding_format: 'base64' },
        status: 200,
      },
    ]);
  });

  test('LangChain’s embedDocuments gives each text’s closed-form vector in order, from one batched request', async () => {
    const vectors = await page.evaluate(
      async ({ MODEL, TEXTS }) => {
        const embeddings = new HearthSdks.OpenAIEmbeddings({
          model: MODEL,
          apiKey: 'k',
          configuration: { baseURL: new URL('v1/openai', location.href).href },
        });
        return await embeddings.embedDocuments(TEXTS);
      },
      { MODEL, TEXTS },
    );
    expectVectors(vectors, TEXTS);
    const sent = await takeSent(page);
    expect(sent.map((s) => [s.url, s.status, s.body])).toEqual([
      [endpoint, 200, { model: MODEL, input: TEXTS, encoding_format: 'base64' }],
    ]);
  });

  test('LangChain sends newlines as spaces (stripNewLines), so a text with newlines gets the vector of its spaced form', async () => {
    const lines = ['the cat\nis on\nthe mat', 'a\ndog'];
    const vectors = await page.evaluate(
      async ({ MODEL, lines }) => {
        const embeddings = new HearthSdks.OpenAIEmbeddings({
          model: MODEL,
          apiKey: 'k',
          configuration: { baseURL: new URL('v1/openai', location.href).href },
        });
        return [
          await embeddings.embedQuery(lines[0]!),
          ...(await embeddings.embedDocuments(lines)),
        ];
      },
      { MODEL, lines },
    );
    const spaced = lines.map((line) => line.replaceAll('\n', ' '));
    expectVectors(vectors, [spaced[0]!, ...spaced]);
    const sent = await takeSent(page);
    expect(sent.map((s) => s.body)).toEqual([
      { model: MODEL, input: spaced[0], encoding_format: 'base64' },
      { model: MODEL, input: spaced, encoding_format: 'base64' },
    ]);
  });
});
