/**
 * Adding GGUF models at run time through the API, with the real service worker and engine worker
 * in Chromium: the fixture GGUF by its URL on the tests' model server (another origin, so CORS
 * applies to the Range request), checked by its header (the first 256 KiB, one Range request,
 * whose metadata tell an embedding model from a chat model) before it is accepted, listed in the
 * catalogue with its engine, kept across a reload, downloaded by the engine worker (which learns
 * of it while it runs), and removed with its files; a file stored from the computer is a model on
 * the device at once. A file that is not a GGUF, a server that does not answer, and an id that
 * exists are refused.
 */
import { expect, type Page } from '@playwright/test';
import { test } from './warm-context';
import {
  FIXTURE_EMBEDDING_DIMENSIONS,
  FIXTURE_SENTENCE,
  fixtureGguf,
} from '../../scripts/fixture-gguf.mjs';
import { KEY, openApp } from './helpers';
import { FIXTURE_GGUF_URL, HUB_REPO, MODEL_PORT, ModelServer, NOT_GGUF_URL } from './model-server';

const server = new ModelServer();
test.beforeAll(() => server.start());
test.afterAll(() => server.stop());
test.beforeEach(() => server.reset());

/** The id a URL on the model server gets: its host (`:` made `-`), the file's stem, no quant. */
const URL_ID = `localhost-${MODEL_PORT}/fixture:GGUF`;
/** The embedding fixture on the model server, and the id its URL gets. */
const EMBEDDING_PATH = '/gguf/llama-fixture-embedding.gguf';
const EMBEDDING_URL = `http://localhost:${MODEL_PORT}${EMBEDDING_PATH}`;
const EMBEDDING_URL_ID = `localhost-${MODEL_PORT}/llama-fixture-embedding:GGUF`;
/**
 * The Range header of the one request that adding a model makes of its (first) file: the first
 * 256 KiB (src/models/added/gguf-check.ts HEADER_BYTES), its magic and its metadata.
 */
const HEADER_RANGE = `bytes=0-${256 * 1024 - 1}`;

interface Answer {
  status: number;
  body: {
    id?: string;
    engine?: string;
    error?: { code: string; message: string; param: string | null };
    [key: string]: unknown;
  };
}

/** A request of the API from the page, with a key. */
function call(page: Page, method: string, path: string, body?: unknown): Promise<Answer> {
  return page.evaluate(
    async ({ method, path, body, KEY }) => {
      const response = await fetch(path, {
        method,
        headers: KEY,
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
      return { status: response.status, body: await response.json() };
    },
    { method, path, body, KEY },
  );
}

const addModel = (page: Page, body: unknown) => call(page, 'POST', 'v1/hearth/models', body);

/** The catalogue entry of `id`, or undefined. */
async function inCatalog(page: Page, id: string) {
  const { body } = await call(page, 'GET', 'v1/hearth/catalog');
  return (body.data as { id: string; [key: string]: unknown }[]).find((m) => m.id === id);
}

/** The keys of the app's GGUF cache. */
const storedGguf = (page: Page) =>
  page.evaluate(async () => (await (await caches.open('hearth/gguf')).keys()).map((r) => r.url));

test('adds the fixture GGUF by URL after reading its header, lists it with its engine, answers the same addition again with that model, and refuses another file under its id', async ({
  page,
}) => {
  await openApp(page);
  const added = await addModel(page, { source: FIXTURE_GGUF_URL });
  expect(added.status).toBe(201);
  expect(added.body).toMatchObject({
    id: URL_ID,
    object: 'model',
    owned_by: `localhost-${MODEL_PORT}`,
    engine: 'llama.cpp',
    downloaded: false,
    source: 'added',
  });
  expect(added.body.size_mb).toBeGreaterThan(0);
  // One Range request of the header: nothing more is downloaded before the user asks.
  expect(server.ggufRequests).toEqual([`GET /gguf/fixture.gguf ${HEADER_RANGE}`]);
  // Its metadata give no pooling type: a chat model.
  expect(added.body).not.toHaveProperty('embedding');
  expect(await inCatalog(page, URL_ID)).toMatchObject({ engine: 'llama.cpp', source: 'added' });

  // The same addition again is the model it made (a site adds its model at every visit), and
  // asks nothing of the network; another file under its id is refused.
  const again = await addModel(page, { source: FIXTURE_GGUF_URL });
  expect(again.status).toBe(200);
  expect(again.body).toMatchObject({ id: URL_ID, engine: 'llama.cpp', source: 'added' });
  expect(server.ggufRequests).toEqual([`GET /gguf/fixture.gguf ${HEADER_RANGE}`]);
  const taken = await addModel(page, { source: EMBEDDING_URL, id: URL_ID });
  expect(taken.status).toBe(409);
  expect(taken.body.error).toMatchObject({ code: 'model_exists', param: 'id' });
});

test('refuses a file that is not a GGUF, and a server that does not answer, with 400', async ({
  page,
}) => {
  await openApp(page);
  const notGguf = await addModel(page, { source: NOT_GGUF_URL });
  expect(notGguf.status).toBe(400);
  expect(notGguf.body.error).toMatchObject({ code: 'invalid_value', param: 'source' });
  expect(notGguf.body.error?.message).toContain('is not a GGUF file');

  // Port 9 (discard) has nothing listening here.
  const unreachable = await addModel(page, { source: 'http://127.0.0.1:9/model.gguf' });
  expect(unreachable.status).toBe(400);
  expect(unreachable.body.error?.message).toContain('could not reach 127.0.0.1:9');

  const missing = await addModel(page, {
    source: `http://localhost:${MODEL_PORT}/gguf/none.gguf`,
  });
  expect(missing.body.error?.message).toContain('answered 404');
  expect(await inCatalog(page, URL_ID)).toBeUndefined();
});

test('keeps an added model across a reload; the engine worker downloads it, and DELETE removes it with its files', async ({
  page,
}) => {
  await openApp(page);
  expect(
    (await addModel(page, { source: FIXTURE_GGUF_URL, id: 'e2e/Fixture-GGUF:F32' })).status,
  ).toBe(201);
  await page.reload();
  await openApp(page);
  expect(await inCatalog(page, 'e2e/Fixture-GGUF:F32')).toMatchObject({ downloaded: false });

  const download = await call(page, 'POST', 'v1/hearth/models/e2e/Fixture-GGUF:F32/download', {
    stream: false,
  });
  expect(download.body).toMatchObject({ phase: 'done', bytes_done: fixtureGguf().byteLength });
  expect(await inCatalog(page, 'e2e/Fixture-GGUF:F32')).toMatchObject({ downloaded: true });
  expect((await storedGguf(page)).length).toBeGreaterThan(0);
  // A new host (this reload's) finds it on the device, not lost.
  await page.reload();
  await openApp(page);
  await expect
    .poll(async () => await inCatalog(page, 'e2e/Fixture-GGUF:F32'))
    .toMatchObject({ downloaded: true });
  expect(await inCatalog(page, 'e2e/Fixture-GGUF:F32')).not.toHaveProperty('evicted');

  // The id's slash and colon encoded, as the openai SDK sends ids.
  const removed = await call(page, 'DELETE', 'v1/hearth/models/e2e%2FFixture-GGUF%3AF32');
  expect(removed).toEqual({
    status: 200,
    body: { id: 'e2e/Fixture-GGUF:F32', object: 'model', deleted: true },
  });
  expect(await inCatalog(page, 'e2e/Fixture-GGUF:F32')).toBeUndefined();
  expect(await storedGguf(page)).toEqual([]);
  expect((await call(page, 'DELETE', 'v1/hearth/models/e2e/Fixture-GGUF:F32')).status).toBe(404);
  await page.reload();
  await openApp(page);
  expect(await inCatalog(page, 'e2e/Fixture-GGUF:F32')).toBeUndefined();
});

test('stores a GGUF from the computer with PUT, adds it as a model already on the device, and chats with it', async ({
  page,
}) => {
  await openApp(page);
  const stored = await page.evaluate(
    async ({ bytes, KEY }) => {
      const file = new File(
        [Uint8Array.from(atob(bytes), (c) => c.charCodeAt(0))],
        'fixture-F32.gguf',
      );
      const response = await fetch(`v1/hearth/files/${encodeURIComponent(file.name)}`, {
        method: 'PUT',
        headers: { authorization: KEY.authorization },
        body: file,
      });
      return {
        status: response.status,
        body: (await response.json()) as { path: string; bytes: number },
      };
    },
    { bytes: Buffer.from(fixtureGguf()).toString('base64'), KEY },
  );
  expect(stored.status).toBe(201);
  expect(stored.body.bytes).toBe(fixtureGguf().byteLength);
  const added = await addModel(page, { source: stored.body.path });
  expect(added.status).toBe(201);
  expect(added.body).toMatchObject({
    id: 'local/fixture:F32',
    downloaded: true,
    engine: 'llama.cpp',
  });
  // llama.cpp serves it, from the device.
  const reply = await call(page, 'POST', 'v1/openai/chat/completions', {
    model: 'local/fixture:F32',
    messages: [{ role: 'user', content: 'Say something.' }],
    temperature: 0,
  });
  expect(reply.status).toBe(200);
  expect(reply.body).toMatchObject({ choices: [{ message: { content: FIXTURE_SENTENCE } }] });
  // A stored file a model uses goes with the model, not alone.
  expect((await call(page, 'DELETE', stored.body.path)).status).toBe(409);
  // The engine holds it: it is taken out, then deleted with its file.
  expect((await call(page, 'DELETE', 'v1/hearth/models/local/fixture:F32')).status).toBe(200);
  expect(await storedGguf(page)).toEqual([]);
});

test('adds a model by its Hugging Face id, looked up on the Hub the build names', async ({
  page,
}) => {
  await openApp(page);
  const wrong = await addModel(page, { source: `hf:${HUB_REPO}:Q4_K_M` });
  expect(wrong.status).toBe(400);
  expect(wrong.body.error?.message).toContain('it has F32');
  const added = await addModel(page, { source: `hf:${HUB_REPO}:f32` });
  expect(added.status).toBe(201);
  expect(added.body).toMatchObject({ id: `${HUB_REPO}:F32`, engine: 'llama.cpp' });
  const download = await call(page, 'POST', `v1/hearth/models/${HUB_REPO}:F32/download`, {
    stream: false,
  });
  expect(download.body).toMatchObject({ phase: 'done' });
  // The Hub's API listed the files; the file was read from its download path.
  expect(server.ggufRequests).toContain(`GET /hub/api/models/${HUB_REPO} `);
  expect(server.ggufRequests).toContain(
    `GET /hub/${HUB_REPO}/resolve/main/fixture-F32.gguf ${HEADER_RANGE}`,
  );
});

test('adds the embedding fixture by URL as an embedding model, as its header says; "embeddings": false makes it a chat model', async ({
  page,
}) => {
  await openApp(page);
  const added = await addModel(page, { source: EMBEDDING_URL });
  expect(added.status).toBe(201);
  expect(added.body).toMatchObject({
    id: EMBEDDING_URL_ID,
    engine: 'llama.cpp',
    downloaded: false,
    source: 'added',
    embedding: {
      dimensions: FIXTURE_EMBEDDING_DIMENSIONS,
      pooling: 'mean',
      normalized: true,
      matryoshka: [],
    },
  });
  expect(FIXTURE_EMBEDDING_DIMENSIONS).toBe(128);
  // Only the header was read: no download at add time.
  expect(server.ggufRequests).toEqual([`GET ${EMBEDDING_PATH} ${HEADER_RANGE}`]);
  expect(await inCatalog(page, EMBEDDING_URL_ID)).toMatchObject({
    embedding: { dimensions: 128, pooling: 'mean' },
  });
  // The models endpoint shows only what is ready here: not downloaded yet, it is 404 saying how
  // to get it; downloaded, it is shown as an embedding model.
  const notYet = await call(page, 'GET', `v1/openai/models/${EMBEDDING_URL_ID}`);
  expect(notYet).toMatchObject({ status: 404, body: { error: { code: 'model_not_found' } } });
  expect(notYet.body.error?.message).toContain(`hearth.models.prepare('${EMBEDDING_URL_ID}')`);
  const downloaded = await call(page, 'POST', `v1/hearth/models/${EMBEDDING_URL_ID}/download`, {
    stream: false,
  });
  expect(downloaded.body).toMatchObject({ phase: 'done' });
  const listed = await call(page, 'GET', `v1/openai/models/${EMBEDDING_URL_ID}`);
  expect(listed.body).toMatchObject({ id: EMBEDDING_URL_ID, embeddings: true, dimensions: 128 });

  // The same file, with "embeddings": false, under another id: a chat model.
  server.reset();
  const asChat = await addModel(page, {
    source: EMBEDDING_URL,
    id: 'e2e/Embed-As-Chat-GGUF:F32',
    embeddings: false,
  });
  expect(asChat.status).toBe(201);
  expect(asChat.body).toMatchObject({ id: 'e2e/Embed-As-Chat-GGUF:F32', engine: 'llama.cpp' });
  expect(asChat.body).not.toHaveProperty('embedding');
  expect(server.ggufRequests).toEqual([`GET ${EMBEDDING_PATH} ${HEADER_RANGE}`]);
  // Its file is on the device already (the same file): listed, and as a chat model.
  expect(await inCatalog(page, 'e2e/Embed-As-Chat-GGUF:F32')).not.toHaveProperty('embedding');
  const chatListed = await call(page, 'GET', 'v1/openai/models/e2e/Embed-As-Chat-GGUF:F32');
  expect(chatListed).toMatchObject({ status: 200, body: { id: 'e2e/Embed-As-Chat-GGUF:F32' } });
  expect(chatListed.body).not.toHaveProperty('embeddings');
});
