/**
 * The clients people use, against a model of a server the user added (tests/e2e/upstream-server.ts
 * in vLLM's dialect, whose replies are the echo engine's): the official `openai` SDK, the Vercel
 * AI SDK (`generateText`, `streamText`, `embedMany` with `@ai-sdk/openai-compatible`) and
 * LangChain (`ChatOpenAI`, `OpenAIEmbeddings`) in a page of the app, configured only with Hearth's
 * base URL; then the same requests from outside the browser through the relay (the `openai` SDK in
 * Node, curl), which answer as the page is answered directly. Every answer carries the id
 * `box/<the server's id>`, and the server is asked for its own id.
 */
import { expect, type Page } from '@playwright/test';
import OpenAI from 'openai';
import { loadSdks, makeClient, openApp } from './helpers';
import { curl, pairTab, sseData, startRelay, type RunningRelay } from './relay';
import { endSuite, lendToSuite, test } from './warm-context';
import {
  echoTokens,
  UPSTREAM_DIMENSIONS,
  UPSTREAM_MODELS,
  UpstreamServer,
  upstreamBase,
  upstreamVector,
} from './upstream-server';

declare global {
  var client: InstanceType<typeof OpenAI>;
}

const upstream = new UpstreamServer();
test.beforeAll(() => upstream.start());
test.afterAll(() => upstream.stop());

const { chat: UPSTREAM_CHAT, embed: UPSTREAM_EMBED } = UPSTREAM_MODELS.vllm;
/** Hearth's ids of the server's chat and embedding models. */
const CHAT = `box/${UPSTREAM_CHAT}`;
const EMBED = `box/${UPSTREAM_EMBED}`;

/** The vector the server computes for `text`, as Hearth answers it: rounded to float32. */
const vectorOf = (text: string) => upstreamVector(text).map(Math.fround);

/** Echo tokens in `text` (the server's token counts). */
const count = (text: string) => echoTokens(text).length;

/** Adds the vLLM-dialect server as `box` from a page of the app, with `key`; expects 201. */
async function addBox(page: Page, key: string): Promise<void> {
  const added = await page.evaluate(
    async ({ base, key }) => {
      const response = await fetch('v1/hearth/servers', {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'box', base_url: base }),
      });
      return { status: response.status, body: (await response.json()) as unknown };
    },
    { base: upstreamBase('vllm'), key },
  );
  expect(added.status, JSON.stringify(added.body)).toBe(201);
  expect(added.body).toMatchObject({ name: 'box', models: [UPSTREAM_CHAT, UPSTREAM_EMBED] });
}

/** Expects the server's last request of `path` to name its own id `model` (and nothing of Hearth's). */
function expectUpstreamAsked(path: string, model: string, fields: Record<string, unknown> = {}) {
  const sent = upstream.last(path);
  expect(sent, `the server got no ${path}`).toBeDefined();
  expect(sent!.body).toMatchObject({ model, ...fields });
}

test.describe('in a page of the app, against the server’s models', () => {
  test.describe.configure({ mode: 'serial' });
  let page: Page;

  test.beforeAll(async ({ browser, warmContexts }, testInfo) => {
    page = await lendToSuite({ browser, warmContexts }, testInfo);
    await openApp(page);
    await loadSdks(page);
    await makeClient(page, 'k');
    await addBox(page, 'k');
  });

  test.afterAll(async ({ warmContexts }) => {
    await endSuite(warmContexts);
  });

  test.beforeEach(() => upstream.reset());

  test('the openai SDK gets the echo of its prompt whole and streamed, with usage and the model id box/<upstream id>, and the server is asked for its own id', async () => {
    const prompt = 'hello from the openai SDK';
    const result = await page.evaluate(
      async ({ CHAT, prompt }) => {
        const whole = await client.chat.completions.create({
          model: CHAT,
          messages: [{ role: 'user', content: prompt }],
        });
        const stream = await client.chat.completions.create({
          model: CHAT,
          messages: [{ role: 'user', content: prompt }],
          stream: true,
          stream_options: { include_usage: true },
        });
        let text = '';
        let usage: unknown = null;
        const models = new Set<string>();
        let finish: string | null = null;
        for await (const chunk of stream) {
          models.add(chunk.model);
          text += chunk.choices[0]?.delta.content ?? '';
          finish = chunk.choices[0]?.finish_reason ?? finish;
          usage = chunk.usage ?? usage;
        }
        return { whole, text, usage, models: [...models], finish };
      },
      { CHAT, prompt },
    );
    const usage = {
      prompt_tokens: count(prompt),
      completion_tokens: count(prompt),
      total_tokens: 2 * count(prompt),
    };
    expect(result.whole).toMatchObject({
      object: 'chat.completion',
      model: CHAT,
      choices: [
        { index: 0, message: { role: 'assistant', content: prompt }, finish_reason: 'stop' },
      ],
      usage,
    });
    expect(result.whole.id).toMatch(/^chatcmpl-/);
    expect(result.text).toBe(prompt);
    expect(result.finish).toBe('stop');
    expect(result.models).toEqual([CHAT]);
    expect(result.usage).toMatchObject(usage);
    const sent = upstream.of('/chat/completions');
    expect(sent.map((r) => [r.body?.model, r.body?.stream ?? false])).toEqual([
      [UPSTREAM_CHAT, false],
      [UPSTREAM_CHAT, true],
    ]);
    expect(sent[1]!.body).toMatchObject({ stream_options: { include_usage: true } });
  });

  test('the openai SDK’s embeddings (asked as base64, decoded) are the server’s vectors rounded to float32, and the server is asked for floats under its own id', async () => {
    const input = ['the first text', 'and a second, longer one'];
    const answer = await page.evaluate(
      async ({ EMBED, input }) => await client.embeddings.create({ model: EMBED, input }),
      { EMBED, input },
    );
    expect(answer).toMatchObject({
      object: 'list',
      model: EMBED,
      usage: { prompt_tokens: count(input[0]!) + count(input[1]!) },
    });
    expect(answer.data.map((d) => [d.object, d.index])).toEqual([
      ['embedding', 0],
      ['embedding', 1],
    ]);
    expect(answer.data.map((d) => d.embedding)).toEqual(input.map(vectorOf));
    expect(answer.data[0]!.embedding).toHaveLength(UPSTREAM_DIMENSIONS);
    expectUpstreamAsked('/embeddings', UPSTREAM_EMBED, { input, encoding_format: 'float' });
  });

  test('the AI SDK’s generateText and streamText give the echo of the prompt, with usage and the response model id box/<upstream id>', async () => {
    const prompt = 'hello from the AI SDK';
    const result = await page.evaluate(
      async ({ CHAT, prompt }) => {
        const { generateText, streamText, createOpenAICompatible } = HearthSdks;
        const hearth = createOpenAICompatible({
          name: 'hearth',
          baseURL: new URL('v1/openai', location.href).href,
          apiKey: 'k',
          includeUsage: true,
        });
        const whole = await generateText({ model: hearth.chatModel(CHAT), prompt });
        const streamed = streamText({ model: hearth.chatModel(CHAT), prompt });
        let text = '';
        for await (const part of streamed.textStream) text += part;
        return {
          whole: {
            text: whole.text,
            modelId: whole.response.modelId,
            finishReason: whole.finishReason,
            usage: [whole.usage.inputTokens, whole.usage.outputTokens],
          },
          streamed: {
            text,
            whole: await streamed.text,
            modelId: (await streamed.response).modelId,
            finishReason: await streamed.finishReason,
            usage: await streamed.usage.then((u) => [u.inputTokens, u.outputTokens]),
          },
        };
      },
      { CHAT, prompt },
    );
    const expected = {
      text: prompt,
      modelId: CHAT,
      finishReason: 'stop',
      usage: [count(prompt), count(prompt)],
    };
    expect(result.whole).toEqual(expected);
    expect(result.streamed).toEqual({ ...expected, whole: prompt });
    const sent = upstream.of('/chat/completions');
    expect(sent.map((r) => [r.body?.model, r.body?.stream ?? false])).toEqual([
      [UPSTREAM_CHAT, false],
      [UPSTREAM_CHAT, true],
    ]);
    expect(sent[1]!.body?.messages).toEqual([{ role: 'user', content: prompt }]);
  });

  test('LangChain’s ChatOpenAI invoke and stream give the echo of the prompt, with usage and the model name box/<upstream id>', async () => {
    const prompt = 'hello from LangChain';
    const result = await page.evaluate(
      async ({ CHAT, prompt }) => {
        const model = new HearthSdks.ChatOpenAI({
          model: CHAT,
          apiKey: 'k',
          configuration: { baseURL: new URL('v1/openai', location.href).href },
        });
        const whole = await model.invoke(prompt);
        let text = '';
        let usage: unknown = null;
        let modelName: unknown = null;
        for await (const chunk of await model.stream(prompt)) {
          text += typeof chunk.content === 'string' ? chunk.content : '';
          usage = chunk.usage_metadata ?? usage;
          modelName = chunk.response_metadata.model_name ?? modelName;
        }
        return {
          whole: {
            text: whole.content,
            modelName: whole.response_metadata.model_name as unknown,
            usage: whole.usage_metadata,
          },
          streamed: { text, modelName, usage },
        };
      },
      { CHAT, prompt },
    );
    const usage = {
      input_tokens: count(prompt),
      output_tokens: count(prompt),
      total_tokens: 2 * count(prompt),
    };
    expect(result.whole).toMatchObject({ text: prompt, modelName: CHAT, usage });
    expect(result.streamed).toMatchObject({ text: prompt, modelName: CHAT, usage });
    const sent = upstream.of('/chat/completions');
    expect(sent.map((r) => [r.body?.model, r.body?.stream ?? false])).toEqual([
      [UPSTREAM_CHAT, false],
      [UPSTREAM_CHAT, true],
    ]);
  });

  test('the AI SDK’s embedMany and LangChain’s embedDocuments and embedQuery give the server’s vectors rounded to float32, in order', async () => {
    const texts = ['one text', 'two texts here', 'and three'];
    const result = await page.evaluate(
      async ({ EMBED, texts }) => {
        const { embedMany, createOpenAICompatible, OpenAIEmbeddings } = HearthSdks;
        const baseURL = new URL('v1/openai', location.href).href;
        const hearth = createOpenAICompatible({ name: 'hearth', baseURL, apiKey: 'k' });
        const ai = await embedMany({ model: hearth.embeddingModel(EMBED), values: texts });
        const langchain = new OpenAIEmbeddings({
          model: EMBED,
          apiKey: 'k',
          configuration: { baseURL },
        });
        return {
          ai: ai.embeddings,
          aiUsage: ai.usage,
          documents: await langchain.embedDocuments(texts),
          query: await langchain.embedQuery(texts[0]!),
        };
      },
      { EMBED, texts },
    );
    const expected = texts.map(vectorOf);
    expect(result.ai).toEqual(expected);
    expect(result.aiUsage).toEqual({ tokens: texts.reduce((n, t) => n + count(t), 0) });
    expect(result.documents).toEqual(expected);
    expect(result.query).toEqual(expected[0]);
    const sent = upstream.of('/embeddings');
    // LangChain's embedQuery sends one string: Hearth forwards its validated request, whose input
    // is always a list (docs/servers.md: "the body as the client sent it, after Hearth's own validation").
    expect(sent.map((r) => [r.body?.model, r.body?.input, r.body?.encoding_format])).toEqual([
      [UPSTREAM_EMBED, texts, 'float'],
      [UPSTREAM_EMBED, texts, 'float'],
      [UPSTREAM_EMBED, [texts[0]], 'float'],
    ]);
  });
});

/** A body with the per-request fields (`id`, `created`) set to fixed values. */
function normalized(body: string): unknown {
  const same = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(same);
    if (value && typeof value === 'object') {
      return Object.fromEntries(
        Object.entries(value).map(([k, v]) => [
          k,
          k === 'id' ? 'ID' : k === 'created' ? 0 : same(v),
        ]),
      );
    }
    return value;
  };
  const events = sseData(body);
  if (events.length > 0) return events.map((d) => (d === '[DONE]' ? d : same(JSON.parse(d))));
  return same(JSON.parse(body));
}

/** A POST made in the page, straight to its service worker: status and body as text. */
function direct(page: Page, path: string, key: string, body: unknown) {
  return page.evaluate(
    async ({ path, key, body }) => {
      const response = await fetch(path, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: await response.text() };
    },
    { path, key, body },
  );
}

test.describe('through the relay, against the server’s models', () => {
  let relay: RunningRelay;

  test.beforeEach(async ({ page, baseURL }) => {
    relay = await startRelay(baseURL ?? '');
    await pairTab(page, relay);
    // The pairing made issued keys the rule: the tab adds the server with the relay's key.
    await addBox(page, relay.key);
    upstream.reset();
  });

  test.afterEach(async () => {
    await relay.stop();
  });

  test('curl through the relay gets the same chat answers (whole and streamed) and vectors as the page gets directly, and the server is asked for its own id', async ({
    page,
  }) => {
    const chat = (content: string, extra: Record<string, unknown> = {}) => ({
      model: CHAT,
      messages: [{ role: 'user', content }],
      ...extra,
    });
    const cases: { path: string; body: Record<string, unknown>; upstreamModel: string }[] = [
      {
        path: 'chat/completions',
        body: chat('whole through the relay'),
        upstreamModel: UPSTREAM_CHAT,
      },
      {
        path: 'chat/completions',
        body: chat('streamed through the relay', {
          stream: true,
          stream_options: { include_usage: true },
        }),
        upstreamModel: UPSTREAM_CHAT,
      },
      {
        path: 'embeddings',
        body: { model: EMBED, input: ['a text', 'another text'] },
        upstreamModel: UPSTREAM_EMBED,
      },
      {
        path: 'embeddings',
        body: { model: EMBED, input: 'in base64', encoding_format: 'base64' },
        upstreamModel: UPSTREAM_EMBED,
      },
    ];
    for (const { path, body, upstreamModel } of cases) {
      const relayed = await curl([
        '-H',
        `authorization: Bearer ${relay.key}`,
        '-H',
        'content-type: application/json',
        '--data-binary',
        JSON.stringify(body),
        `${relay.baseUrl}/${path}`,
      ]);
      expect(relayed.status, relayed.body).toBe(200);
      expectUpstreamAsked(`/${path}`, upstreamModel);
      const mine = await direct(page, `v1/openai/${path}`, relay.key, body);
      expect(mine.status).toBe(200);
      expect(normalized(relayed.body), path).toEqual(normalized(mine.body));
      expectUpstreamAsked(`/${path}`, upstreamModel);
    }
    expect(upstream.requests).toHaveLength(2 * cases.length);
    const floats = JSON.parse(
      (await direct(page, 'v1/openai/embeddings', relay.key, cases[2]!.body)).body,
    ) as { data: { embedding: number[] }[] };
    expect(floats.data.map((d) => d.embedding)).toEqual(['a text', 'another text'].map(vectorOf));
  });

  test('the openai SDK in Node through the relay gets the echo of its prompt whole and streamed, and the server’s vectors decoded from base64, as box/<upstream id>', async () => {
    const client = new OpenAI({ baseURL: relay.sdkBaseUrl, apiKey: relay.key, maxRetries: 0 });
    const prompt = 'from Node through the relay';
    const tokens = count(prompt);
    const whole = await client.chat.completions.create({
      model: CHAT,
      messages: [{ role: 'user', content: prompt }],
    });
    expect(whole).toMatchObject({
      object: 'chat.completion',
      model: CHAT,
      choices: [{ message: { role: 'assistant', content: prompt }, finish_reason: 'stop' }],
      usage: { prompt_tokens: tokens, completion_tokens: tokens, total_tokens: 2 * tokens },
    });
    expectUpstreamAsked('/chat/completions', UPSTREAM_CHAT, {
      messages: [{ role: 'user', content: prompt }],
    });

    const stream = await client.chat.completions.create({
      model: CHAT,
      messages: [{ role: 'user', content: prompt }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined = null;
    const models = new Set<string>();
    for await (const chunk of stream) {
      models.add(chunk.model);
      text += chunk.choices[0]?.delta.content ?? '';
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe(prompt);
    expect([...models]).toEqual([CHAT]);
    expect(usage).toMatchObject({ prompt_tokens: tokens, completion_tokens: tokens });
    expectUpstreamAsked('/chat/completions', UPSTREAM_CHAT, { stream: true });

    const input = ['a text to embed', 'and one more'];
    // No encoding_format: the SDK asks for base64 and decodes it.
    const vectors = await client.embeddings.create({ model: EMBED, input });
    expect(vectors.model).toBe(EMBED);
    expect(vectors.data.map((d) => d.embedding)).toEqual(input.map(vectorOf));
    expectUpstreamAsked('/embeddings', UPSTREAM_EMBED, { input, encoding_format: 'float' });
  });
});
