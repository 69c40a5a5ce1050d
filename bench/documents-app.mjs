// The documents rows measured in the built app (`npm run bench -- --documents`, issue 47), in
// headless Chromium against the bench build, as bench/run.mjs serves and opens it:
//
// - indexing throughput: a 100-page PDF made at test time (tests/test-pdfs.ts) uploaded with
//   `POST /v1/openai/files` and put in a new vector store (`POST /v1/openai/vector_stores`, the
//   benchmark embedding GGUF as its `embedding_model`), timed in the page from the upload to the
//   file's `completed` — against, in the same run, the same chunks' texts embedded alone through
//   `POST /v1/openai/embeddings` (one request, as the indexer sends them), and the PDF's text read
//   and cut alone in the page (the indexer's own `pdfSections` and `chunkSections`);
// - the search's share of a `file_search` turn's time to first token: a Responses stream with
//   `tools: [{type: 'file_search', vector_store_ids: [that store]}]` against the same request
//   without the tool, `hearth/echo` answering, taking turns.
//
// The benchmark embedding GGUF spells a word letter by letter (about a token a character, context
// 512) and embeds ~1,000 tokens a second on one thread here: a page of this PDF is two lines (~24
// words, ~133 characters, one chunk under `auto`), so that the run takes seconds, not the minutes
// a document of prose would cost this model (whose pages would be chunks longer than its context).
import { readFileSync } from 'node:fs';
import { transformWithOxc } from 'vite';
import { median, round } from './stats.mjs';

const KEY = 'Bearer bench';
/** The question of the `file_search` turns: words of the sample pages. */
const QUERY = 'where does the index live beside the model';

/**
 * @typedef {object} AppContext the bench build, opened (bench/run.mjs)
 * @property {import('playwright-core').Page} page the bench page, under the app's scope
 * @property {string} embedModel the benchmark embedding GGUF's id in the bench catalogue
 */

/** The PDF of the run: tests/test-pdfs.ts (no imports) compiled by vite's own TypeScript transform (oxc). */
async function testPdfs() {
  const source = readFileSync('tests/test-pdfs.ts', 'utf8');
  const { code } = await transformWithOxc(source, 'test-pdfs.ts');
  /** @type {{ makePdf: (pages: string[][]) => Uint8Array, samplePages: (n: number, o?: { linesPerPage?: number }) => string[][] }} */
  const pdfs = await import(`data:text/javascript;base64,${Buffer.from(code).toString('base64')}`);
  return pdfs;
}

/**
 * A request of the bench page; throws with its body unless 200.
 * @param {import('playwright-core').Page} page
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 */
async function call(page, method, path, body) {
  const { status, text } = await page.evaluate(
    async ({ method, path, body, KEY }) => {
      const response = await fetch(path, {
        method,
        headers: { authorization: KEY, 'content-type': 'application/json' },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
      return { status: response.status, text: await response.text() };
    },
    { method, path, body, KEY },
  );
  if (status !== 200) throw new Error(`${method} ${path}: ${status} ${text}`);
  return text;
}

/**
 * Uploads the PDF and makes a store of it, in the page, timed from the upload to the file's
 * `completed` (its status read every 50 ms).
 * @param {import('playwright-core').Page} page
 * @param {string} pdf the PDF, base64
 * @param {string} model
 */
function indexOnce(page, pdf, model) {
  return page.evaluate(
    async ({ pdf, model, KEY }) => {
      const bytes = Uint8Array.from(atob(pdf), (c) => c.charCodeAt(0));
      const headers = { authorization: KEY };
      const json = { ...headers, 'content-type': 'application/json' };
      const started = performance.now();
      const form = new FormData();
      form.append('file', new File([bytes], 'bench-100-pages.pdf', { type: 'application/pdf' }));
      form.append('purpose', 'assistants');
      const uploaded = await fetch('/v1/openai/files', { method: 'POST', headers, body: form });
      if (uploaded.status !== 200) throw new Error(`upload: ${uploaded.status}`);
      const file = await uploaded.json();
      const made = await fetch('/v1/openai/vector_stores', {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ name: 'bench', file_ids: [file.id], embedding_model: model }),
      });
      if (made.status !== 200) throw new Error(`store: ${made.status} ${await made.text()}`);
      const store = await made.json();
      const path = `/v1/openai/vector_stores/${store.id}/files/${file.id}`;
      for (;;) {
        const now = await (await fetch(path, { headers })).json();
        if (now.status === 'completed') break;
        if (now.status !== 'in_progress') throw new Error(`indexing: ${JSON.stringify(now)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const ms = performance.now() - started;
      return { ms, store: store.id, file: file.id };
    },
    { pdf, model, KEY },
  );
}

/**
 * The same texts embedded alone, one request, timed in the page to its body parsed.
 * @param {import('playwright-core').Page} page
 * @param {string[]} texts
 * @param {string} model
 */
function embedOnce(page, texts, model) {
  return page.evaluate(
    async ({ texts, model, KEY }) => {
      const started = performance.now();
      const response = await fetch('/v1/openai/embeddings', {
        method: 'POST',
        headers: { authorization: KEY, 'content-type': 'application/json' },
        body: JSON.stringify({ model, input: texts }),
      });
      if (response.status !== 200) throw new Error(`embeddings: ${await response.text()}`);
      const body = await response.json();
      if (body.data.length !== texts.length) throw new Error('embeddings: a vector short');
      return performance.now() - started;
    },
    { texts, model, KEY },
  );
}

/**
 * Milliseconds to the first `response.output_text.delta` of a Responses stream with the
 * `file_search` tool and without it, `runs` pairs taking turns (each first in every other pair),
 * each after a small request to wake the service worker, as the Responses bench's first-token
 * rows; `warmup` pairs first, not counted (the first search builds the store's index).
 * @param {import('playwright-core').Page} page
 * @param {{ store: string, runs: number, warmup: number }} options
 */
function firstTokens(page, { store, runs, warmup }) {
  return page.evaluate(
    async ({ store, runs, warmup, QUERY, KEY }) => {
      const headers = { authorization: KEY, 'content-type': 'application/json' };
      const url = '/v1/openai/responses';
      const warm = JSON.stringify({ model: 'hearth/echo', input: 'w', store: false });
      const plain = { model: 'hearth/echo', input: QUERY, stream: true, store: false };
      const bodies = {
        with: JSON.stringify({
          ...plain,
          echo_delay_ms: 1,
          tools: [{ type: 'file_search', vector_store_ids: [store] }],
        }),
        without: JSON.stringify({ ...plain, echo_delay_ms: 1 }),
      };
      const token = 'event: response.output_text.delta\n';
      /** @param {'with' | 'without'} kind */
      const once = async (kind) => {
        await (await fetch(url, { method: 'POST', headers, body: warm })).text();
        const abort = new AbortController();
        const started = performance.now();
        const response = await fetch(url, {
          method: 'POST',
          signal: abort.signal,
          headers,
          body: bodies[kind],
        });
        if (response.status !== 200 || !response.body)
          throw new Error(`${kind}: ${response.status}`);
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        let text = '';
        while (!text.includes(token)) {
          const { done, value } = await reader.read();
          if (done) throw new Error(`${kind}: the stream ended before its first token`);
          text += value;
        }
        const elapsed = performance.now() - started;
        if (kind === 'with' && !text.includes('response.file_search_call.completed'))
          throw new Error('with: no file_search_call before the first token');
        abort.abort();
        await new Promise((resolve) => setTimeout(resolve, 20));
        return elapsed;
      };
      /** @type {{ with: number[], without: number[] }} */
      const out = { with: [], without: [] };
      for (let r = 0; r < warmup + runs; r += 1) {
        /** @type {('with' | 'without')[]} */
        const order = r % 2 === 0 ? ['with', 'without'] : ['without', 'with'];
        for (const kind of order) {
          const ms = await once(kind);
          if (r >= warmup) out[kind].push(ms);
        }
      }
      return out;
    },
    { store, runs, warmup, QUERY, KEY },
  );
}

/**
 * The rows: indexing throughput and its baselines, then the search's share of a `file_search`
 * turn's first token. Without the app (`app` absent) it measures nothing.
 * @param {{ size: { quick?: boolean }, log: (what: string) => void, app?: AppContext }} options
 */
export async function measureDocumentsApp({ size, log, app }) {
  if (!app) return {};
  const { page, embedModel: model } = app;
  const quick = size.quick === true;
  const { makePdf, samplePages } = await testPdfs();
  const pages = samplePages(100, { linesPerPage: 2 });
  const pdfBytes = makePdf(pages);
  const pdf = Buffer.from(pdfBytes).toString('base64');

  log(`downloading and loading ${model} through the API`);
  const download = await call(page, 'POST', `/v1/hearth/models/${model}/download`);
  if (!download.includes('"phase":"done"')) throw new Error('the download did not finish');
  const cores = await page.evaluate(() => navigator.hardwareConcurrency);
  // What the app gives llama.cpp by default (llamaThreads in src/engines/llama/llama-runtime.ts).
  const threads = Math.max(1, Math.min(Math.floor(cores / 2), 4));
  await page.evaluate(
    (threads) => /** @type {any} */ (globalThis).bench.llama({ type: 'threads', threads }),
    threads,
  );
  await call(page, 'POST', `/v1/hearth/models/${model}/load`);
  // Warm up: an embedding and a PDF read, so that neither side pays a first call's costs.
  await embedOnce(page, ['the device keeps every document'], model);

  log('the PDF read and chunked in the page (pdf.js, pdfSections + chunkSections)');
  /** @type {{ pages: number, chunks: number, extract_ms: number, chunk_ms: number }[]} */
  const reads = [];
  for (let r = 0; r < (quick ? 2 : 6); r += 1) {
    reads.push(
      await page.evaluate(
        (pdf) =>
          /** @type {any} */ (globalThis).bench.pdfText(
            Uint8Array.from(atob(pdf), (c) => c.charCodeAt(0)),
          ),
        pdf,
      ),
    );
  }
  const rounds = quick ? 1 : 3;
  log(
    `a ${pages.length}-page PDF indexed through the API, and its chunks embedded alone, ${rounds} time(s) each, taking turns`,
  );
  /** @type {number[]} */
  const indexed = [];
  /** @type {number[]} */
  const embedded = [];
  /** @type {string[]} */
  let texts = [];
  let last = { ms: 0, store: '', file: '' };
  for (let r = 0; r < rounds; r += 1) {
    const index = async () => {
      last = await indexOnce(page, pdf, model);
      indexed.push(last.ms);
      if (texts.length === 0) {
        const content = JSON.parse(
          await call(
            page,
            'GET',
            `/v1/openai/vector_stores/${last.store}/files/${last.file}/content`,
          ),
        );
        texts = content.data.map((/** @type {{ text: string }} */ c) => c.text);
      }
    };
    const embed = async () => void embedded.push(await embedOnce(page, texts, model));
    // The first round indexes first (its chunks' texts are the baseline's input).
    if (r % 2 === 0) {
      await index();
      await embed();
    } else {
      await embed();
      await index();
    }
  }
  const indexMs = median(indexed);
  const embedMs = median(embedded);
  const read = reads.at(-1);
  const chars = texts.reduce((n, t) => n + t.length, 0);
  /** @type {Record<string, unknown>} */
  const results = {
    documents_app_runtime: `Chromium (headless), the bench build; llama.cpp ${threads} thread(s)`,
    documents_pdf_pages: pages.length,
    documents_pdf_chunks: texts.length,
    documents_pdf_bytes: pdfBytes.length,
    documents_pdf_chunk_chars: Math.round(chars / Math.max(1, texts.length)),
    documents_index_ms: Math.round(indexMs),
    documents_index_pages_per_s: round((pages.length * 1000) / indexMs, 1),
    documents_index_chunks_per_s: round((texts.length * 1000) / indexMs, 1),
    documents_embed_ms: Math.round(embedMs),
    documents_embed_chunks_per_s: round((texts.length * 1000) / embedMs, 1),
    documents_index_added_ms: Math.round(indexMs - embedMs),
    documents_index_ratio_vs_embed: round(indexMs / embedMs, 3),
    documents_pdf_extract_ms: round(median(reads.map((r) => r.extract_ms))),
    documents_pdf_chunk_ms: round(median(reads.map((r) => r.chunk_ms)), 2),
  };
  if (read && (read.pages !== pages.length || read.chunks !== texts.length)) {
    throw new Error(
      `the page read ${read.pages} pages and ${read.chunks} chunks; the store kept ${texts.length} chunks`,
    );
  }

  const runs = quick ? 4 : 20;
  log(`time to first token of a Responses turn with file_search and without, ${runs} pairs`);
  const ttft = await firstTokens(page, { store: last.store, runs, warmup: 2 });
  const withMs = median(ttft.with);
  const withoutMs = median(ttft.without);
  results.documents_file_search_ttft_ms = round(withMs);
  results.documents_plain_ttft_ms = round(withoutMs);
  results.documents_file_search_added_ms = round(
    median(ttft.with.map((t, i) => t - (ttft.without[i] ?? NaN))),
  );
  results.documents_file_search_share = round((withMs - withoutMs) / withMs, 3);
  // What the search's own step is made of here: embedding the query with the store's model.
  /** @type {number[]} */
  const queries = [];
  for (let r = 0; r < runs; r += 1) queries.push(await embedOnce(page, [QUERY], model));
  results.documents_query_embed_ms = round(median(queries));
  results.documents_app_samples = {
    index_ms: indexed.map(Math.round),
    embed_ms: embedded.map(Math.round),
    extract_ms: reads.map((r) => round(r.extract_ms)),
    query_embed_ms: queries.map((t) => round(t)),
    ttft_ms: { with: ttft.with.map((t) => round(t)), without: ttft.without.map((t) => round(t)) },
  };
  return results;
}

/** The rows, as run.mjs's TARGETS: [key, what, check or null, target]. */
/** @type {[string, string, ((v: number) => boolean) | null, string][]} */
export const DOCUMENTS_APP_TARGETS = [
  [
    'documents_app_runtime',
    'documents (app): measured in headless Chromium, the bench build',
    null,
    '',
  ],
  [
    'documents_pdf_pages',
    'documents: pages of the PDF made at test time (2 lines a page)',
    null,
    '',
  ],
  ['documents_pdf_chunks', 'documents: chunks the store kept (auto: 800/400)', null, ''],
  ['documents_pdf_chunk_chars', 'documents: characters of a chunk (mean)', null, ''],
  [
    'documents_index_pages_per_s',
    'documents: indexing, pages/s (upload → completed, bench embedding GGUF)',
    null,
    '',
  ],
  ['documents_index_chunks_per_s', 'documents: indexing, chunks/s', null, ''],
  ['documents_index_ms', 'documents: indexing, upload to completed, ms (median)', null, ''],
  [
    'documents_embed_ms',
    'documents: baseline, the same chunks embedded alone (POST /embeddings), ms',
    null,
    '',
  ],
  ['documents_embed_chunks_per_s', 'documents: baseline, chunks/s embedded alone', null, ''],
  [
    'documents_index_added_ms',
    'documents: what indexing adds over embedding (read, chunk, store), ms',
    null,
    '',
  ],
  ['documents_index_ratio_vs_embed', 'documents: indexing ms ÷ embedding alone ms', null, ''],
  [
    'documents_pdf_extract_ms',
    'documents: baseline, the PDF read alone (pdfSections in the page), ms',
    null,
    '',
  ],
  [
    'documents_pdf_chunk_ms',
    'documents: its pages cut into chunks alone (chunkSections), ms',
    null,
    '',
  ],
  [
    'documents_file_search_share',
    'documents: the search’s share of a file_search turn’s first token, (with − without) ÷ with',
    null,
    '',
  ],
  [
    'documents_file_search_ttft_ms',
    'documents: first token, Responses with file_search, ms',
    null,
    '',
  ],
  [
    'documents_plain_ttft_ms',
    'documents: first token, the same request without the tool, ms',
    null,
    '',
  ],
  [
    'documents_file_search_added_ms',
    'documents: with minus without, ms (median of paired differences)',
    null,
    '',
  ],
  [
    'documents_query_embed_ms',
    'documents: baseline, the query alone embedded (POST /embeddings, one input), ms',
    null,
    '',
  ],
];
