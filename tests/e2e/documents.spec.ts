/**
 * Documents on the device through the API (docs/api.md: Files, Vector stores, file_search), with
 * the stock `openai` SDK in a page of the app, in Chromium and Firefox: the real service worker
 * and its IndexedDB, the bridge to the engine worker, pdf.js reading a PDF made at test time
 * there, and llama.cpp embedding the chunks with the embedding fixture (scripts/fixture-gguf.mjs),
 * downloaded once for the file. A Markdown file and a 5-page PDF go into one store; a search finds
 * a rare word of each under its heading and on its page; `file_search` answers through Responses
 * (the echo engine says the passages it was given, so its answer cites `[1]`), whole and
 * streamed; a file that is no document fails alone; the store outlives a reload of the page; and
 * deletes forget. In Chromium, an upload the storage cannot hold (its estimate made small) is
 * refused with nothing kept, and a Node client does the same through the relay (last: its pairing
 * makes issued keys the rule).
 *
 * The fixture's context is 512 tokens and its tokenizer spends about a token a character on
 * words it lacks, so the pages and sections here stay short (each is one chunk).
 *
 * One boot of the app for the file (`sharedAppTest`), and its tests run in order: they share the
 * store the first one makes (indexing it costs most of the file's time).
 */
import { expect, test as base, type Page } from '@playwright/test';
import OpenAI, { toFile } from 'openai';
import { makePdf, samplePages } from '../test-pdfs';
import { KEY, makeClient, openApp } from './helpers';
import { downloadFixture, FIXTURE_ID, FIXTURE_SENTENCE } from './fixture-model';
import { ModelServer } from './model-server';
import { pairTab, startRelay } from './relay';
import { sharedAppTest } from './warm-context';

const MODEL = 'e2e/fixture-embed-GGUF:F32';
const server = new ModelServer();

// Before the app's boot (sharedAppTest's beforeAll): the model server the download asks.
base.beforeAll(async () => server.start());
const test = sharedAppTest();
test.describe.configure({ mode: 'serial' });

/** The rare words, each in one passage: the Markdown's (under "Ferns"), the PDF's (page 3). */
const MD_WORD = 'quillwort';
const PDF_WORD = 'zanzibarite';

const NOTES = `# Field notes

Notes kept on the device about the garden and the river.

## Ferns

The ${MD_WORD} grows in the shallow water by the mill, beside the reeds.

## Birds

The heron nests by the mill and fishes at dawn.
`;

/** Five short pages (one chunk each), the rare word on page 3. */
const PDF = makePdf(samplePages(5, { linesPerPage: 4, rare: { page: 3, word: PDF_WORD } }));

/** A search result as Hearth answers it: OpenAI's, with `page` or `heading`. */
interface Hit {
  file_id: string;
  filename: string;
  score: number;
  content: { type: string; text: string }[];
  chunk_id: string;
  page?: number;
  heading?: string;
}

/** What the tests share: the store the first test makes, and its files. */
const kept = { store: '', md: '', pdf: '' };

test.beforeAll(async ({ page }) => {
  test.setTimeout(120_000);
  await downloadFixture(page, 'k', MODEL);
  // The e2e catalogue's Matryoshka entry is the same file, so it is on the device too: the
  // owner chooses one in Settings, as the 409 of a store made without a choice says.
  const chosen = await page.evaluate(
    async ({ MODEL, KEY }) => {
      const response = await fetch('v1/hearth/settings', {
        method: 'PATCH',
        headers: KEY,
        body: JSON.stringify({ embedding_model: MODEL }),
      });
      return { status: response.status, body: (await response.json()) as unknown };
    },
    { MODEL, KEY },
  );
  expect(chosen).toMatchObject({ status: 200, body: { embedding_model: MODEL } });
});

test.afterAll(async () => server.stop());

test.beforeEach(async ({ page }) => makeClient(page));

/** Polls the store in the page until no file is in progress; the store and its files. */
function settle(page: Page, storeId: string) {
  return page.evaluate(async (storeId) => {
    let store = await client.vectorStores.retrieve(storeId);
    for (let i = 0; store.file_counts.in_progress > 0 && i < 300; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      store = await client.vectorStores.retrieve(storeId);
    }
    const files = [];
    for await (const file of client.vectorStores.files.list(storeId)) files.push(file);
    return { store, files };
  }, storeId);
}

/** `vectorStores.search` in the page: the results. */
function search(page: Page, storeId: string, query: string): Promise<Hit[]> {
  return page.evaluate(
    async ({ storeId, query }) => {
      const found = await client.vectorStores.search(storeId, { query });
      return found.data as unknown as Hit[];
    },
    { storeId, query },
  );
}

test('indexes a Markdown file and a PDF made here into a store: both completed, with usage', async ({
  page,
}) => {
  const made = await page.evaluate(
    async ({ notes, pdf }) => {
      const md = await client.files.create({
        file: new File([notes], 'notes.md', { type: 'text/markdown' }),
        purpose: 'assistants',
      });
      const report = await client.files.create({
        file: new File([new Uint8Array(pdf)], 'report.pdf', { type: 'application/pdf' }),
        purpose: 'assistants',
      });
      const store = await client.vectorStores.create({
        name: 'Field notes',
        file_ids: [md.id, report.id],
      });
      return { md: md.id, pdf: report.id, store };
    },
    { notes: NOTES, pdf: [...PDF] },
  );
  expect(made.store).toMatchObject({
    id: expect.stringMatching(/^vs_/),
    object: 'vector_store',
    name: 'Field notes',
    // Hearth's: the one chosen in Settings.
    embedding_model: MODEL,
  });
  Object.assign(kept, { store: made.store.id, md: made.md, pdf: made.pdf });
  const { store, files } = await settle(page, kept.store);
  expect(store).toMatchObject({
    status: 'completed',
    file_counts: { in_progress: 0, completed: 2, failed: 0, cancelled: 0, total: 2 },
  });
  expect(store.usage_bytes).toBeGreaterThan(0);
  expect(files.map((f) => [f.id, f.status, f.last_error]).sort()).toEqual(
    [
      [kept.md, 'completed', null],
      [kept.pdf, 'completed', null],
    ].sort(),
  );
  for (const file of files) expect(file.usage_bytes).toBeGreaterThan(0);
});

test('hybrid search finds the rare word of each file: the Markdown’s under its heading, the PDF’s on page 3', async ({
  page,
}) => {
  const [md] = await search(page, kept.store, MD_WORD);
  expect(md).toMatchObject({ file_id: kept.md, filename: 'notes.md', heading: 'Ferns' });
  expect(md!.content[0]!.text).toContain(MD_WORD);
  expect(md!.score).toBeGreaterThan(0);
  expect(md!.score).toBeLessThanOrEqual(1);

  const [pdf] = await search(page, kept.store, PDF_WORD);
  expect(pdf).toMatchObject({ file_id: kept.pdf, filename: 'report.pdf', page: 3 });
  expect(pdf!.content[0]!.text).toContain(PDF_WORD);
  expect(pdf!.content[0]!.text).toContain('Page 3.');

  // The PDF's pages are chunks of their own, each with its page (pdf.js read all five).
  const content = await page.evaluate(
    async ({ store, pdf }) => {
      const texts = [];
      for await (const part of client.vectorStores.files.content(pdf, { vector_store_id: store }))
        texts.push(part.text);
      return texts;
    },
    { store: kept.store, pdf: kept.pdf },
  );
  expect(content).toHaveLength(5);
  content.forEach((text, i) => expect(text).toContain(`Page ${i + 1}.`));
});

test('file_search through responses.create: the file_search_call with its results, and the answer citing [1]', async ({
  page,
}) => {
  const query = `Where is the ${PDF_WORD}?`;
  const response = await page.evaluate(
    ({ store, query }) =>
      client.responses.create({
        model: 'hearth/echo',
        input: query,
        tools: [{ type: 'file_search', vector_store_ids: [store], max_num_results: 2 }],
        include: ['file_search_call.results'],
      }),
    { store: kept.store, query },
  );
  expect(response.status).toBe('completed');
  const [call, message] = response.output;
  expect(call).toMatchObject({
    type: 'file_search_call',
    id: expect.stringMatching(/^fs_/),
    status: 'completed',
    queries: [query],
  });
  if (call?.type !== 'file_search_call') throw new Error('no file_search_call first');
  expect(call.results).toHaveLength(2);
  expect(call.results![0]).toMatchObject({ file_id: kept.pdf, filename: 'report.pdf', page: 3 });
  expect(call.results![0]!.text).toContain(PDF_WORD);
  if (message?.type !== 'message') throw new Error('no message after the file_search_call');
  const part = message.content[0];
  if (part?.type !== 'output_text') throw new Error('no output_text');
  // The echo engine says the passages it was given (its system prompt) in brackets.
  expect(part.text).toContain('[1] report.pdf, page 3: ');
  expect(part.text).toContain(PDF_WORD);
  expect(response.output_text).toBe(part.text);
  const [cited] = part.annotations;
  expect(cited).toMatchObject({ type: 'file_citation', file_id: kept.pdf, filename: 'report.pdf' });
  if (cited?.type !== 'file_citation') throw new Error('no file_citation');
  expect(part.text.slice(cited.index - 3, cited.index)).toBe('[1]');
  // Every annotation is a citation of a passage found, at the end of its marker.
  for (const a of part.annotations) {
    if (a.type !== 'file_citation') throw new Error(`not a file_citation: ${a.type}`);
    const n = Number(/\[(\d+)\]$/.exec(part.text.slice(0, a.index))?.[1]);
    expect(a.file_id).toBe(call.results![n - 1]?.file_id);
  }
});

test('file_search with the fixture GGUF through llama.cpp: the passages reach the real engine, which reads them (more input tokens) and answers its sentence', async ({
  page,
}) => {
  await downloadFixture(page);
  const replies = await page.evaluate(
    async ({ store, query, model }) =>
      Promise.all([
        client.responses.create({ model, input: query }),
        client.responses.create({
          model,
          input: query,
          tools: [{ type: 'file_search', vector_store_ids: [store] }],
        }),
      ]).then((rs) =>
        rs.map((r) => ({
          types: r.output.map((i) => i.type),
          text: r.output_text,
          read: r.usage?.input_tokens ?? 0,
        })),
      ),
    { store: kept.store, query: PDF_WORD, model: FIXTURE_ID },
  );
  const [plain, searched] = replies;
  if (!plain || !searched) throw new Error('two replies expected');
  expect(searched.types).toEqual(['file_search_call', 'message']);
  expect(searched.text).toBe(FIXTURE_SENTENCE);
  expect(plain.text).toBe(FIXTURE_SENTENCE);
  // The passages went into the prompt the tokenizer counted.
  expect(searched.read).toBeGreaterThan(plain.read + 20);
});

test('file_search through responses.stream: the file_search_call events come first, the citations before output_text.done', async ({
  page,
}) => {
  const streamed = await page.evaluate(
    async ({ store, query }) => {
      const stream = client.responses.stream({
        model: 'hearth/echo',
        input: query,
        tools: [{ type: 'file_search', vector_store_ids: [store] }],
      });
      const types: string[] = [];
      for await (const event of stream) types.push(event.type);
      return { types, final: await stream.finalResponse() };
    },
    { store: kept.store, query: MD_WORD },
  );
  const { types, final } = streamed;
  expect(types.slice(0, 7)).toEqual([
    'response.created',
    'response.in_progress',
    'response.output_item.added',
    'response.file_search_call.in_progress',
    'response.file_search_call.searching',
    'response.file_search_call.completed',
    'response.output_item.done',
  ]);
  const annotation = types.indexOf('response.output_text.annotation.added');
  expect(annotation).toBeGreaterThan(6);
  expect(annotation).toBeLessThan(types.indexOf('response.output_text.done'));
  expect(types.at(-1)).toBe('response.completed');
  const [call, message] = final.output;
  // Without include, the call's results are not given.
  expect(call).toMatchObject({ type: 'file_search_call', queries: [MD_WORD], results: null });
  expect(message).toMatchObject({ type: 'message' });
  expect(final.output_text).toContain('[1] notes.md, "Ferns": ');
});

test('a file that is no document fails alone (a PNG, bytes that are not text); the store still answers', async ({
  page,
}) => {
  const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52];
  const BINARY = [0x00, 0x01, 0x02, 0xff, 0xfe, 0x00, 0xc3, 0x28, 0x00, 0x80, 0x81, 0x00];
  const added = await page.evaluate(
    async ({ store, PNG, BINARY }) => {
      const png = await client.files.create({
        file: new File([new Uint8Array(PNG)], 'pixel.png', { type: 'image/png' }),
        purpose: 'assistants',
      });
      const bin = await client.files.create({
        file: new File([new Uint8Array(BINARY)], 'data.txt', { type: 'text/plain' }),
        purpose: 'assistants',
      });
      // Accepted by the calls that add them: they fail in the background.
      const first = await client.vectorStores.files.create(store, { file_id: png.id });
      const second = await client.vectorStores.files.create(store, { file_id: bin.id });
      return { png: png.id, bin: bin.id, statuses: [first.status, second.status] };
    },
    { store: kept.store, PNG, BINARY },
  );
  expect(added.statuses).toEqual(['in_progress', 'in_progress']);
  const { store, files } = await settle(page, kept.store);
  expect(store).toMatchObject({
    status: 'completed',
    file_counts: { in_progress: 0, completed: 2, failed: 2, cancelled: 0, total: 4 },
  });
  const byId = new Map(files.map((f) => [f.id, f]));
  expect(byId.get(added.png)).toMatchObject({
    status: 'failed',
    usage_bytes: 0,
    last_error: { code: 'unsupported_file', message: expect.stringContaining('pixel.png') },
  });
  expect(byId.get(added.bin)).toMatchObject({
    status: 'failed',
    last_error: { code: 'invalid_file', message: expect.stringContaining('data.txt') },
  });
  expect(byId.get(kept.md)?.status).toBe('completed');
  expect(byId.get(kept.pdf)?.status).toBe('completed');
  const [hit] = await search(page, kept.store, MD_WORD);
  expect(hit).toMatchObject({ file_id: kept.md, heading: 'Ferns' });
  // Nothing of the failed files is searched.
  const all = await page.evaluate(
    (store) => client.vectorStores.search(store, { query: 'pixel data', max_num_results: 50 }),
    kept.store,
  );
  expect(all.data.map((h) => h.file_id).filter((id) => id !== kept.md && id !== kept.pdf)).toEqual(
    [],
  );
});

test('the store survives a reload of the page (IndexedDB), and a search after it works (the index built again)', async ({
  page,
  browserName,
}) => {
  // Chromium: the service worker stopped too, so that its memory (the search index) goes with
  // it; Firefox cannot stop it from outside, and the reload ends the engine worker in both.
  if (browserName === 'chromium') {
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('ServiceWorker.enable');
    await cdp.send('ServiceWorker.stopAllWorkers');
    await cdp.detach();
  }
  await openApp(page);
  await makeClient(page);
  const { store } = await settle(page, kept.store);
  expect(store).toMatchObject({
    id: kept.store,
    name: 'Field notes',
    file_counts: { in_progress: 0, completed: 2, failed: 2, total: 4 },
  });
  expect(store.usage_bytes).toBeGreaterThan(0);
  const [pdf] = await search(page, kept.store, PDF_WORD);
  expect(pdf).toMatchObject({ file_id: kept.pdf, page: 3 });
  const [md] = await search(page, kept.store, MD_WORD);
  expect(md).toMatchObject({ file_id: kept.md, heading: 'Ferns' });
});

test('deletes forget: a file out of the store, a file deleted from Files, then the store', async ({
  page,
}) => {
  const result = await page.evaluate(
    async ({ store, md, pdf, MD_WORD, PDF_WORD }) => {
      const notFound = async (call: () => Promise<unknown>) => {
        try {
          await call();
          return null;
        } catch (err) {
          const e = err as InstanceType<typeof OpenAI.APIError>;
          return {
            notFound: e.constructor.name === 'NotFoundError',
            status: e.status,
            code: e.code,
          };
        }
      };
      const ids = async (query: string) =>
        (await client.vectorStores.search(store, { query, max_num_results: 50 })).data.map(
          (h) => [h.file_id, h.content.map((c) => c.text).join('')] as const,
        );
      const storeFiles = async () => {
        const list = [];
        for await (const f of client.vectorStores.files.list(store)) list.push(f.id);
        return list;
      };

      // Out of the store: its passages are no longer found; the file stays in Files.
      const removed = await client.vectorStores.files.delete(md, { vector_store_id: store });
      const afterRemove = await ids(MD_WORD);
      const mdStays = (await client.files.retrieve(md)).id;

      // Deleted from Files: gone from the store too.
      const deleted = await client.files.delete(pdf);
      const afterDelete = await ids(PDF_WORD);
      const inStore = await notFound(() =>
        client.vectorStores.files.retrieve(pdf, { vector_store_id: store }),
      );
      const filesLeft = await storeFiles();
      const counts = (await client.vectorStores.retrieve(store)).file_counts;

      // The store itself: 404 after; its files stay in Files.
      const gone = await client.vectorStores.delete(store);
      const storeAfter = await notFound(() => client.vectorStores.retrieve(store));
      const searchAfter = await notFound(() => client.vectorStores.search(store, { query: 'x' }));
      const stillFiles = [];
      for await (const f of client.files.list()) stillFiles.push(f.id);
      for (const id of stillFiles) await client.files.delete(id);
      return {
        removed,
        afterRemove,
        mdStays,
        deleted,
        afterDelete,
        inStore,
        filesLeft,
        counts,
        gone,
        storeAfter,
        searchAfter,
        stillFiles,
      };
    },
    { ...kept, MD_WORD, PDF_WORD },
  );
  expect(result.removed).toEqual({
    id: kept.md,
    object: 'vector_store.file.deleted',
    deleted: true,
  });
  expect(result.afterRemove.map(([id]) => id)).not.toContain(kept.md);
  expect(result.afterRemove.some(([, text]) => text.includes(MD_WORD))).toBe(false);
  // The PDF still answers until it is deleted.
  expect(result.afterRemove.map(([id]) => id)).toContain(kept.pdf);
  expect(result.mdStays).toBe(kept.md);

  expect(result.deleted).toEqual({ id: kept.pdf, object: 'file', deleted: true });
  expect(result.afterDelete).toEqual([]);
  expect(result.inStore).toMatchObject({ notFound: true, status: 404 });
  expect(result.filesLeft).not.toContain(kept.pdf);
  expect(result.filesLeft).toHaveLength(2);
  expect(result.counts).toMatchObject({ completed: 0, failed: 2, in_progress: 0, total: 2 });

  expect(result.gone).toEqual({ id: kept.store, object: 'vector_store.deleted', deleted: true });
  expect(result.storeAfter).toMatchObject({
    notFound: true,
    status: 404,
    code: 'vector_store_not_found',
  });
  expect(result.searchAfter).toMatchObject({ notFound: true, status: 404 });
  expect(result.stillFiles).toContain(kept.md);
  expect(result.stillFiles).not.toContain(kept.pdf);
});

test('an upload the storage cannot hold is 507 storage_full, nothing of it kept; with room again, it is kept', async ({
  page,
  browserName,
}) => {
  // Chromium's DevTools quota override (Storage.overrideQuotaForOrigin) binds Cache Storage's
  // writes only: measured, neither navigator.storage.estimate nor IndexedDB (where files are kept)
  // sees it. So the service worker's estimate is made to say that the disk is nearly full, as a
  // full one does, through Playwright's handle on the worker.
  test.skip(
    browserName !== 'chromium',
    'Playwright reaches a service worker’s globals (to make its storage estimate small) only in Chromium',
  );
  const SIZE = 4 * 1024 * 1024;
  const scope = new URL('./', page.url()).href;
  const worker = page
    .context()
    .serviceWorkers()
    .find((w) => w.url().startsWith(scope));
  if (!worker) throw new Error(`no service worker of ${scope}`);
  const upload = () =>
    page.evaluate(async (size) => {
      try {
        // No retries: the SDK retries a 5xx twice, and a full disk stays full meanwhile.
        const file = await client.files.create(
          {
            file: new File([new Uint8Array(size).fill(97)], 'big.txt', { type: 'text/plain' }),
            purpose: 'assistants',
          },
          { maxRetries: 0 },
        );
        return { id: file.id, bytes: file.bytes };
      } catch (err) {
        const e = err as InstanceType<typeof OpenAI.APIError>;
        return { status: e.status, code: e.code, message: e.message };
      }
    }, SIZE);
  const names = () =>
    page.evaluate(async () => {
      const list = [];
      for await (const f of client.files.list()) list.push(f.filename);
      return list;
    });
  const before = await names();
  try {
    // Room for a quarter of the file, over what is stored now.
    await worker.evaluate((room) => {
      const storage = navigator.storage;
      const real = StorageManager.prototype.estimate.bind(storage);
      storage.estimate = async () => {
        const found = await real();
        return { ...found, quota: (found.usage ?? 0) + room };
      };
    }, SIZE / 4);
    const refused = await upload();
    expect(refused).toMatchObject({ status: 507, code: 'storage_full' });
    expect((refused as { message: string }).message).toMatch(/Not enough space for big\.txt/);
    expect(await names()).toEqual(before);
  } finally {
    await worker.evaluate(() => {
      delete (navigator.storage as { estimate?: unknown }).estimate;
    });
  }
  const kept = await upload();
  expect(kept).toMatchObject({ id: expect.stringMatching(/^file-/), bytes: SIZE });
  expect(await names()).toEqual(['big.txt', ...before]);
  await page.evaluate((id) => client.files.delete(id), (kept as { id: string }).id);
});

test('a Node client searches through the relay, and file_search answers there', async ({
  page,
  browserName,
}) => {
  test.skip(
    browserName !== 'chromium',
    'a Node client of the relay: the browser of the paired tab is tested by the tests above',
  );
  const relay = await startRelay(test.info().project.use.baseURL ?? '');
  try {
    await pairTab(page, relay);
    const client = new OpenAI({ baseURL: relay.sdkBaseUrl, apiKey: relay.key });
    const file = await client.files.create({
      file: await toFile(Buffer.from(NOTES), 'notes.md', { type: 'text/markdown' }),
      purpose: 'assistants',
    });
    let store = await client.vectorStores.create({ file_ids: [file.id] });
    for (let i = 0; store.file_counts.in_progress > 0 && i < 300; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      store = await client.vectorStores.retrieve(store.id);
    }
    expect(store.file_counts).toMatchObject({ completed: 1, failed: 0, total: 1 });
    const found = await client.vectorStores.search(store.id, { query: MD_WORD });
    expect(found.data[0]).toMatchObject({ file_id: file.id, filename: 'notes.md' });
    expect((found.data[0] as unknown as Hit).heading).toBe('Ferns');
    const response = await client.responses.create({
      model: 'hearth/echo',
      input: MD_WORD,
      tools: [{ type: 'file_search', vector_store_ids: [store.id] }],
      include: ['file_search_call.results'],
    });
    expect(response.output[0]).toMatchObject({ type: 'file_search_call', status: 'completed' });
    expect(response.output_text).toContain('[1] notes.md, "Ferns": ');
    await client.vectorStores.delete(store.id);
    await client.files.delete(file.id);
    await expect(client.vectorStores.retrieve(store.id)).rejects.toBeInstanceOf(
      OpenAI.NotFoundError,
    );
  } finally {
    await relay.stop();
  }
});

declare global {
  var client: InstanceType<typeof OpenAI>;
}
