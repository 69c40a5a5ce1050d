/**
 * Vector stores over the API as the service worker wires it, with files uploaded through
 * `POST /v1/openai/files`, an embedding model that hashes words into vectors (so that search is
 * deterministic), and the echo engine for chat: stores and their files, indexing in the
 * background (a file that is no document fails alone), hybrid search, batches, and deletes that
 * forget.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApi, type Api } from '../../../src/api/router';
import { memoryDocumentStore, type DocumentStore } from '../../../src/documents/store';
import { ECHO_MODEL, staticModelDirectory, type ModelInfo } from '../../../src/models/models';
import type { ChatBackend, ChatEvent } from '../../../src/protocol/host/backend';
import { echoStack, URL_BASE } from '../helpers';
import { estimateTokens } from '../../../src/documents/chunk';
import { OpenAIError } from '../../../src/protocol/errors';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** An embedding model on the device, whose vectors the fake engine below makes. */
const EMBEDDER: ModelInfo = {
  ...ECHO_MODEL,
  id: 'acme/embed-GGUF:Q8_0',
  owned_by: 'acme',
  context_window: 512,
  embedding: { dimensions: 64, pooling: 'mean', normalized: true, matryoshka: [] },
};

/** Each word hashed into one of 64 dimensions, normalised: texts sharing words are close. */
function hashVector(text: string): Float32Array {
  const vector = new Float32Array(64);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    let h = 0;
    for (const c of word) h = (h * 31 + c.charCodeAt(0)) >>> 0;
    vector[h % 64] = (vector[h % 64] ?? 0) + 1;
  }
  const norm = Math.hypot(...vector) || 1;
  return vector.map((x) => x / norm);
}

let stack: ReturnType<typeof echoStack>;
let api: Api;
let documents: DocumentStore;
let embedded: number;
/** While set, the fake engine waits for it before embedding a batch after the first. */
let gate: Promise<void> | undefined;

function makeApi(models: ModelInfo[] = [ECHO_MODEL, EMBEDDER]): Api {
  const backend: ChatBackend = {
    chat: (request, options) => stack.backend.chat(request, options),
    async *embed(request): AsyncGenerator<ChatEvent> {
      const texts = request.input as string[];
      // As llama.cpp refuses an input longer than the model's context.
      const long = texts.findIndex((t) => estimateTokens(t) > EMBEDDER.context_window);
      if (long !== -1) {
        throw new OpenAIError(
          'context_length_exceeded',
          `Input ${long} is longer than 512 tokens.`,
        );
      }
      if (embedded > 0 && gate) await gate;
      embedded += texts.length;
      yield { type: 'embeddings', vectors: texts.map(hashVector), prompt_tokens: texts.length };
    },
  };
  return createApi({ backend, models: staticModelDirectory(models), documents });
}

beforeEach(() => {
  stack = echoStack();
  documents = memoryDocumentStore();
  embedded = 0;
  gate = undefined;
  api = makeApi();
});
afterEach(() => stack.close());

async function call(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Json }> {
  const response = await api.fetch(
    new Request(`${URL_BASE}/v1/openai/${path}`, {
      method,
      headers: {
        authorization: 'Bearer k',
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    }),
  );
  return { status: response.status, body: (await response.json()) as Json };
}

async function upload(
  name: string,
  text: string | Uint8Array<ArrayBuffer>,
  type: string,
): Promise<string> {
  const form = new FormData();
  form.append('purpose', 'assistants');
  form.append('file', new File([text], name, { type }));
  const response = await api.fetch(
    new Request(`${URL_BASE}/v1/openai/files`, {
      method: 'POST',
      headers: { authorization: 'Bearer k' },
      body: form,
    }),
  );
  const body = (await response.json()) as Json;
  expect(response.status, JSON.stringify(body)).toBe(200);
  return body.id as string;
}

/** Waits until the store has no file in progress; returns it. */
async function settled(storeId: string): Promise<Json> {
  let store: Json = {};
  for (let i = 0; i < 200; i += 1) {
    store = (await call('GET', `vector_stores/${storeId}`)).body;
    if (store.file_counts?.in_progress === 0) return store;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`the store ${storeId} never settled: ${JSON.stringify(store)}`);
}

const GUIDE = `# Hearth guide

Hearth runs models in the browser.

## Storage

Models are kept in the origin's storage; the quota decides how many fit.

## Relay

The relay lets programs outside the browser reach the tab. A fingerprint like zanzibarite
identifies its key.
`;

describe('vector stores', () => {
  it('indexes a Markdown file in the background and finds a rare word’s passage, with its heading', async () => {
    const file = await upload('guide.md', GUIDE, 'text/markdown');
    const created = await call('POST', 'vector_stores', { name: 'Docs', file_ids: [file] });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      object: 'vector_store',
      name: 'Docs',
      embedding_model: EMBEDDER.id,
    });
    expect(created.body.id).toMatch(/^vs_[A-Za-z0-9]{24}$/);
    const store = await settled(created.body.id);
    expect(store).toMatchObject({
      status: 'completed',
      file_counts: { in_progress: 0, completed: 1, failed: 0, cancelled: 0, total: 1 },
    });
    expect(store.usage_bytes).toBeGreaterThan(0);
    const found = await call('POST', `vector_stores/${store.id}/search`, { query: 'zanzibarite' });
    expect(found.body).toMatchObject({
      object: 'vector_store.search_results.page',
      search_query: ['zanzibarite'],
      has_more: false,
    });
    expect(found.body.data[0]).toMatchObject({
      file_id: file,
      filename: 'guide.md',
      heading: 'Relay',
    });
    expect(found.body.data[0].content[0].text).toContain('zanzibarite');
  });

  it('fails a file that is no document alone; the store still answers', async () => {
    const good = await upload('guide.md', GUIDE, 'text/markdown');
    const png = await upload(
      'pixel.png',
      new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0]),
      'image/png',
    );
    const { body } = await call('POST', 'vector_stores', { file_ids: [good, png] });
    const store = await settled(body.id);
    expect(store.file_counts).toMatchObject({ completed: 1, failed: 1, total: 2 });
    const failed = await call('GET', `vector_stores/${store.id}/files/${png}`);
    expect(failed.body).toMatchObject({
      status: 'failed',
      last_error: { code: 'unsupported_file' },
    });
    expect(failed.body.last_error.message).toContain('pixel.png');
    const found = await call('POST', `vector_stores/${store.id}/search`, { query: 'quota' });
    expect(found.body.data[0].file_id).toBe(good);
  });

  it('cuts chunks to what the store’s embedding model can embed: a long section of the default strategy indexes', async () => {
    // About 1,000 estimated tokens in one section: one chunk of `auto`'s 800 would not fit 512.
    const long = `# Long\n\n${'The mill wheel turns slowly by the river. '.repeat(95)}`;
    const file = await upload('long.md', long, 'text/markdown');
    const { body } = await call('POST', 'vector_stores', { file_ids: [file] });
    const store = await settled(body.id);
    expect(store.file_counts).toMatchObject({ completed: 1, failed: 0 });
    const record = await call('GET', `vector_stores/${body.id}/files/${file}`);
    // The file reports the strategy it was given.
    expect(record.body.chunking_strategy.static.max_chunk_size_tokens).toBe(800);
  });

  it('says how far a file’s indexing is, chunk by chunk, as a download says its bytes', async () => {
    const sections = Array.from({ length: 40 }, (_, i) => `# Part ${i}\n\nText of part ${i}.`);
    const file = await upload('parts.md', sections.join('\n\n'), 'text/markdown');
    let release = () => {};
    gate = new Promise((resolve) => (release = resolve));
    const { body } = await call('POST', 'vector_stores', { file_ids: [file] });
    let record: Json = {};
    for (let i = 0; i < 200 && record.progress?.chunks_done !== 16; i += 1) {
      record = (await call('GET', `vector_stores/${body.id}/files/${file}`)).body;
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(record).toMatchObject({
      status: 'in_progress',
      progress: { chunks_done: 16, chunks_total: 40 },
    });
    release();
    gate = undefined;
    await settled(body.id);
    const done = (await call('GET', `vector_stores/${body.id}/files/${file}`)).body;
    expect(done).toMatchObject({ status: 'completed', progress: null });
  });

  it('refuses a store when no embedding model is on the device, saying how to get one', async () => {
    api = makeApi([ECHO_MODEL]);
    const { status, body } = await call('POST', 'vector_stores', { name: 'x' });
    expect(status).toBe(409);
    expect(body.error).toMatchObject({
      code: 'embedding_model_required',
      param: 'embedding_model',
    });
    expect(body.error.message).toContain('download');
  });

  it('answers a missing file in file_ids with 404 naming it, and keeps no store', async () => {
    const { status, body } = await call('POST', 'vector_stores', { file_ids: ['file-nope'] });
    expect(status).toBe(404);
    expect(body.error).toMatchObject({ code: 'file_not_found', param: 'file_ids[0]' });
    expect((await call('GET', 'vector_stores')).body.data).toEqual([]);
  });

  it('filters by attributes, and forgets a file taken out of the store', async () => {
    const a = await upload('a.md', '# A\n\nThe lighthouse keeper logs the tide.', 'text/markdown');
    const b = await upload('b.md', '# B\n\nThe lighthouse lamp burns oil.', 'text/markdown');
    const { body: store } = await call('POST', 'vector_stores', {});
    await call('POST', `vector_stores/${store.id}/files`, {
      file_id: a,
      attributes: { team: 'sea' },
    });
    await call('POST', `vector_stores/${store.id}/files`, {
      file_id: b,
      attributes: { team: 'land' },
    });
    await settled(store.id);
    const sea = await call('POST', `vector_stores/${store.id}/search`, {
      query: 'lighthouse',
      filters: { type: 'eq', key: 'team', value: 'sea' },
    });
    expect(sea.body.data.map((r: Json) => r.file_id)).toEqual([a]);
    const removed = await call('DELETE', `vector_stores/${store.id}/files/${a}`);
    expect(removed.body).toEqual({ id: a, object: 'vector_store.file.deleted', deleted: true });
    const all = await call('POST', `vector_stores/${store.id}/search`, { query: 'lighthouse' });
    expect(all.body.data.map((r: Json) => r.file_id)).toEqual([b]);
    // The file itself is still there.
    expect((await call('GET', `files/${a}`)).status).toBe(200);
  });

  it('lists a store’s files, gives a file’s parsed content, and changes its attributes', async () => {
    const file = await upload('guide.md', GUIDE, 'text/markdown');
    const { body } = await call('POST', 'vector_stores', { file_ids: [file] });
    await settled(body.id);
    const list = await call('GET', `vector_stores/${body.id}/files?filter=completed`);
    expect(list.body).toMatchObject({ object: 'list', data: [{ id: file, status: 'completed' }] });
    const content = await call('GET', `vector_stores/${body.id}/files/${file}/content`);
    expect(content.body.object).toBe('vector_store.file_content.page');
    expect(content.body.data.map((d: Json) => d.text).join('\n')).toContain('zanzibarite');
    const updated = await call('POST', `vector_stores/${body.id}/files/${file}`, {
      attributes: { year: 2026 },
    });
    expect(updated.body.attributes).toEqual({ year: 2026 });
  });

  it('runs a file batch and reports its counts', async () => {
    const a = await upload('a.txt', 'alpha text about comets', 'text/plain');
    const b = await upload('b.txt', 'beta text about meteors', 'text/plain');
    const { body: store } = await call('POST', 'vector_stores', {});
    const batch = await call('POST', `vector_stores/${store.id}/file_batches`, {
      file_ids: [a, b],
    });
    expect(batch.body).toMatchObject({
      object: 'vector_store.files_batch',
      vector_store_id: store.id,
    });
    expect(batch.body.id).toMatch(/^vsfb_/);
    await settled(store.id);
    const done = await call('GET', `vector_stores/${store.id}/file_batches/${batch.body.id}`);
    expect(done.body).toMatchObject({
      status: 'completed',
      file_counts: { completed: 2, total: 2 },
    });
    const files = await call(
      'GET',
      `vector_stores/${store.id}/file_batches/${batch.body.id}/files`,
    );
    expect(files.body.data).toHaveLength(2);
  });

  it('updates, lists and deletes stores; a deleted store is 404 and its chunks are gone', async () => {
    const file = await upload('guide.md', GUIDE, 'text/markdown');
    const { body } = await call('POST', 'vector_stores', { name: 'one', file_ids: [file] });
    await settled(body.id);
    const renamed = await call('POST', `vector_stores/${body.id}`, {
      name: 'two',
      metadata: { k: 'v' },
    });
    expect(renamed.body).toMatchObject({ name: 'two', metadata: { k: 'v' } });
    expect((await call('GET', 'vector_stores')).body.data.map((s: Json) => s.id)).toEqual([
      body.id,
    ]);
    const deleted = await call('DELETE', `vector_stores/${body.id}`);
    expect(deleted.body).toEqual({ id: body.id, object: 'vector_store.deleted', deleted: true });
    const gone = await call('GET', `vector_stores/${body.id}`);
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe('vector_store_not_found');
    expect(await documents.chunksOf(body.id)).toEqual([]);
  });

  it('takes up a file a stopped worker left in progress', async () => {
    const file = await upload('guide.md', GUIDE, 'text/markdown');
    const { body } = await call('POST', 'vector_stores', { file_ids: [file] });
    await settled(body.id);
    // As a worker stopped mid-file leaves it: in progress, no chunks.
    await documents.putStoreFile({
      ...(await documents.getStoreFile(body.id, file))!,
      status: 'in_progress',
    });
    await documents.putChunks(body.id, file, []);
    api = makeApi();
    const store = await settled(body.id);
    expect(store.file_counts.completed).toBe(1);
    expect((await documents.chunksOf(body.id)).length).toBeGreaterThan(0);
  });

  it('refuses what is not OpenAI’s: a bad chunking strategy, an unknown path', async () => {
    const bad = await call('POST', 'vector_stores', {
      chunking_strategy: {
        type: 'static',
        static: { max_chunk_size_tokens: 200, chunk_overlap_tokens: 150 },
      },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('chunking_strategy.static.chunk_overlap_tokens');
    const { body } = await call('POST', 'vector_stores', {});
    expect((await call('GET', `vector_stores/${body.id}/nope`)).body.error.code).toBe(
      'unknown_url',
    );
    expect(embedded).toBe(0);
  });
});

describe('file_search in the Responses API', () => {
  async function storeWithGuide(): Promise<{ store: string; file: string }> {
    const file = await upload('guide.md', GUIDE, 'text/markdown');
    const { body } = await call('POST', 'vector_stores', { file_ids: [file] });
    await settled(body.id);
    return { store: body.id, file };
  }

  it('searches the stores on the last user message, gives the model the passages, and cites them', async () => {
    const { store, file } = await storeWithGuide();
    const { status, body } = await call('POST', 'responses', {
      model: 'hearth/echo',
      input: 'What is zanzibarite?',
      tools: [{ type: 'file_search', vector_store_ids: [store], max_num_results: 2 }],
      include: ['file_search_call.results'],
    });
    expect(status).toBe(200);
    const [searchCall, message] = body.output;
    expect(searchCall).toMatchObject({
      type: 'file_search_call',
      status: 'completed',
      queries: ['What is zanzibarite?'],
    });
    expect(searchCall.id).toMatch(/^fs_/);
    expect(searchCall.results[0]).toMatchObject({ file_id: file, filename: 'guide.md' });
    expect(searchCall.results[0].text).toContain('zanzibarite');
    // The echo engine says its system prompt in brackets: the numbered passages it was given.
    const part = message.content[0];
    expect(part.text).toContain('[1] guide.md, "Relay"');
    expect(part.text).toContain('zanzibarite');
    const cited = part.annotations[0];
    expect(cited).toMatchObject({ type: 'file_citation', file_id: file, filename: 'guide.md' });
    expect(part.text.slice(cited.index - 3, cited.index)).toBe('[1]');
  });

  it('streams the search’s events before the answer, and the citations as annotation events', async () => {
    const { store } = await storeWithGuide();
    const response = await api.fetch(
      new Request(`${URL_BASE}/v1/openai/responses`, {
        method: 'POST',
        headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'hearth/echo',
          stream: true,
          input: 'zanzibarite',
          tools: [{ type: 'file_search', vector_store_ids: [store] }],
        }),
      }),
    );
    const text = await response.text();
    const types = [...text.matchAll(/^event: (.+)$/gm)].map((m) => m[1]);
    expect(types.slice(0, 7)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.file_search_call.in_progress',
      'response.file_search_call.searching',
      'response.file_search_call.completed',
      'response.output_item.done',
    ]);
    expect(types).toContain('response.output_text.annotation.added');
    expect(types.at(-1)).toBe('response.completed');
  });

  it('names the tool’s vector_store_ids when a store is not kept, and searches nothing under tool_choice none', async () => {
    const missing = await call('POST', 'responses', {
      model: 'hearth/echo',
      input: 'x',
      tools: [{ type: 'file_search', vector_store_ids: ['vs_nope'] }],
    });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({
      code: 'vector_store_not_found',
      param: 'tools[0].vector_store_ids',
    });
    const none = await call('POST', 'responses', {
      model: 'hearth/echo',
      input: 'plain',
      tool_choice: 'none',
      tools: [{ type: 'file_search', vector_store_ids: ['vs_nope'] }],
    });
    expect(none.body.output).toMatchObject([{ type: 'message', content: [{ text: 'plain' }] }]);
  });
});

describe('file_search on chat completions (Hearth’s extension field)', () => {
  it('gives the model the passages, and the reply says what was found; a stream on its first chunk', async () => {
    const file = await upload('guide.md', GUIDE, 'text/markdown');
    const { body: store } = await call('POST', 'vector_stores', { file_ids: [file] });
    await settled(store.id);
    const request = {
      model: 'hearth/echo',
      messages: [{ role: 'user', content: 'zanzibarite' }],
      file_search: { vector_store_ids: [store.id], max_num_results: 1 },
    };
    const whole = await call('POST', 'chat/completions', request);
    expect(whole.status).toBe(200);
    expect(whole.body.file_search).toMatchObject({
      queries: ['zanzibarite'],
      results: [{ file_id: file, filename: 'guide.md', heading: 'Relay' }],
    });
    // The echo says its system prompt: the numbered passage it was given, then the question.
    expect(whole.body.choices[0].message.content).toMatch(/^\[Passages from .*\[1\] guide\.md/s);
    expect(whole.body.choices[0].message.content).toMatch(/\] zanzibarite$/);
    const streamed = await api.fetch(
      new Request(`${URL_BASE}/v1/openai/chat/completions`, {
        method: 'POST',
        headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
        body: JSON.stringify({ ...request, stream: true }),
      }),
    );
    const chunks = (await streamed.text())
      .split('\n\n')
      .filter((e) => e.startsWith('data: {'))
      .map((e) => JSON.parse(e.slice(6)) as Json);
    expect(chunks[0]?.file_search).toEqual(whole.body.file_search);
    expect(chunks.slice(1).some((c) => 'file_search' in c)).toBe(false);
  });

  it('names the field at fault, and the next request still works', async () => {
    const bad = await call('POST', 'chat/completions', {
      model: 'hearth/echo',
      messages: [{ role: 'user', content: 'x' }],
      file_search: { vector_store_ids: [] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('file_search.vector_store_ids');
    const missing = await call('POST', 'chat/completions', {
      model: 'hearth/echo',
      messages: [{ role: 'user', content: 'x' }],
      file_search: { vector_store_ids: ['vs_nope'] },
    });
    expect(missing.body.error).toMatchObject({
      code: 'vector_store_not_found',
      param: 'file_search.vector_store_ids',
    });
    const plain = await call('POST', 'chat/completions', {
      model: 'hearth/echo',
      messages: [{ role: 'user', content: 'still here' }],
    });
    expect(plain.body.choices[0].message.content).toBe('still here');
    expect('file_search' in plain.body).toBe(false);
  });
});
