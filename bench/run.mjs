// `npm run bench`: what the API layer costs, measured in headless Chromium against baselines
// measured in the same run — a bare service worker with no engine (the floor), the echo engine
// called in the page itself, and llama.cpp on the benchmark GGUF (~50 MB, on the CPU, one thread
// and several) called directly in the engine worker (bench/real-engine.mjs), and llama.cpp's
// embeddings on the benchmark embedding GGUF (~50 MB) likewise (bench/real-embed.mjs), images
// with the vision fixture, with and without (bench/vision.mjs), and a model on a server the user
// added, against the same server fetched directly from the page (bench/servers.mjs), and a
// Responses stream against a chat-completions stream of the same reply (bench/responses.mjs).
// Prints a table and writes bench/results/latest.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname } from 'node:path';
import { chromium } from 'playwright-core';
import { build, preview } from 'vite';
import { browserHelp, CHROMIUM_ARGS, findChromium } from '../scripts/browsers.mjs';
import { workerHeaps } from '../scripts/cdp-workers.mjs';
import { BENCH_OPTIONS, fixtureEmbeddingGguf, fixtureGguf } from '../scripts/fixture-gguf.mjs';
import { fixtureVisionGguf, VISION_BENCH_OPTIONS } from '../scripts/fixture-vision.mjs';
import { EMBED_TARGETS, measureEmbed } from './real-embed.mjs';
import { LLAMA_TARGETS, measureLlama } from './real-engine.mjs';
import { RESPONSES_TARGETS, measureResponses } from './responses.mjs';
import { SERVER_TARGETS, measureServers } from './servers.mjs';
import { SITE_TARGETS, measureSite, siteTables } from './site.mjs';
import { VISION_TARGETS, measureVision } from './vision.mjs';
import { DOCUMENTS_TARGETS, measureDocuments } from './documents.mjs';
import { median, round } from './stats.mjs';

const PORT = Number(process.env.BENCH_PORT ?? 4190);
const OUT_DIR = 'dist-bench';
const KEY = 'Bearer bench';
/** The benchmark GGUF (scripts/fixture-gguf.mjs, ~50 MB), as the bench build's catalogue has it. */
const GGUF_ID = 'bench/fixture-bench-GGUF:F32';
const GGUF_PATH = 'models/bench/fixture-bench.gguf';
/** The benchmark embedding GGUF (~50 MB, width 512, context 512), served the same way. */
const EMBED_ID = 'bench/fixture-embed-bench-GGUF:F32';
const EMBED_PATH = 'models/bench/fixture-embed-bench.gguf';
/**
 * The vision fixture (scripts/fixture-vision.mjs) and its bench projector: one language model, two
 * projectors, each pair a model of the bench build's catalogue.
 */
const VISION = {
  fixture: { id: 'bench/fixture-vision-GGUF:F32', mmproj: 'models/bench/mmproj-vision.gguf' },
  bench: {
    id: 'bench/fixture-vision-bench-GGUF:F32',
    mmproj: 'models/bench/mmproj-vision-bench.gguf',
  },
};
const VISION_PATH = 'models/bench/fixture-vision.gguf';
const MODELS_FILE = `${OUT_DIR}.models.json`;
const quick = process.argv.includes('--quick');
/** Only the stream rows (the floor and the API, streamed): `npm run bench -- --stream`. */
const streamOnly = process.argv.includes('--stream');
/**
 * Only the Responses rows (a Responses stream against a chat stream of the same reply):
 * `npm run bench -- --responses`.
 */
const responsesOnly = process.argv.includes('--responses');
/** Only the image rows: `npm run bench -- --vision`. */
const visionOnly = process.argv.includes('--vision');
/** Only the embedding rows: `npm run bench -- --embed`. */
const embedOnly = process.argv.includes('--embed');
/** Only the rows of a server the user added: `npm run bench -- --servers`. */
const serversOnly = process.argv.includes('--servers');
/**
 * Only llama.cpp's rows, and the floor's latency their target is set against:
 * `npm run bench -- --llama`.
 */
const llamaOnly = process.argv.includes('--llama');
/**
 * Only the rows of a site that installs the package (bench/site.mjs), which need no bench build:
 * `npm run bench -- --site`.
 */
const siteOnly = process.argv.includes('--site');
/**
 * Only the documents rows (bench/documents.mjs: hybrid search at 10k chunks, in Node; indexing a
 * 100-page PDF and file_search's first token in the bench build, bench/documents-app.mjs):
 * `npm run bench -- --documents`.
 */
const documentsOnly = process.argv.includes('--documents');
/** A run of some rows only, which writes a file of its own. */
const partial =
  streamOnly ||
  responsesOnly ||
  embedOnly ||
  serversOnly ||
  llamaOnly ||
  siteOnly ||
  visionOnly ||
  documentsOnly;
/** Sizes of each measurement (a quick run is for checking the bench itself). */
const N = quick
  ? {
      requests: 50,
      warmup: 10,
      streamTokens: 2_000,
      streamRuns: 1,
      sdkTokens: 200,
      sdkRuns: 1,
      ttftRuns: 5,
      responses: { tokens: 2_000, runs: 3, ttftRuns: 6 },
      memoryTokens: 20_000,
      llama: {
        decodeSeconds: 2,
        maxTokens: 400,
        decodePairs: 1,
        decodeBudgetS: 0,
        ttftRuns: 5,
        ttftBudgetS: 10,
      },
      embed: { b1BudgetS: 0, b64BudgetS: 0, minRounds: 2 },
      vision: { runs: 3 },
      servers: {
        ttfbRuns: 10,
        ttfbTokens: 8,
        streamTokens: 2_000,
        streamRuns: 1,
        pacedSeconds: 0.5,
        pacedRuns: 1,
        requestRuns: 10,
        warmup: 5,
      },
      site: { visits: 2, returns: 1, ttftRuns: 2, prepareRuns: 2 },
    }
  : {
      requests: 500,
      warmup: 50,
      streamTokens: 20_000,
      streamRuns: 3,
      sdkTokens: 2_000,
      sdkRuns: 3,
      ttftRuns: 100,
      responses: { tokens: 20_000, runs: 31, ttftRuns: 100 },
      memoryTokens: 200_000,
      llama: {
        decodeSeconds: 3,
        maxTokens: 1_000,
        decodePairs: 12,
        decodeBudgetS: 75,
        ttftRuns: 30,
        ttftBudgetS: 30,
      },
      embed: { b1BudgetS: 15, b64BudgetS: 30, minRounds: 3 },
      vision: { runs: 15 },
      servers: {
        ttfbRuns: 100,
        ttfbTokens: 8,
        streamTokens: 20_000,
        streamRuns: 6,
        pacedSeconds: 3,
        pacedRuns: 3,
        requestRuns: 100,
        warmup: 20,
      },
      site: { visits: 7, returns: 2, ttftRuns: 9, prepareRuns: 5 },
    };

const words = (n) => Array.from({ length: n }, (_, i) => `w${i}`).join(' ');

async function buildBench() {
  process.env.HEARTH_OUT_DIR = OUT_DIR;
  process.env.HEARTH_BENCH = '1';
  process.env.PORT = String(PORT);
  // The bench build's catalogue: the benchmark GGUFs, files of the app (written below).
  writeFileSync(
    MODELS_FILE,
    JSON.stringify({
      models: [
        { id: GGUF_ID, engine: 'llama.cpp', files: [GGUF_PATH], context_window: 2048 },
        {
          id: EMBED_ID,
          engine: 'llama.cpp',
          files: [EMBED_PATH],
          context_window: 512,
          embedding: { dimensions: 512, pooling: 'mean' },
        },
        ...Object.values(VISION).map(({ id, mmproj }) => ({
          id,
          engine: 'llama.cpp',
          files: [VISION_PATH],
          mmproj,
          context_window: 2048,
        })),
      ],
    }),
  );
  process.env.HEARTH_MODELS_FILE = MODELS_FILE;
  await build({ logLevel: 'warn' });
  // Served by `vite preview` (Range included) and not precached: the bench downloads it.
  mkdirSync(dirname(`${OUT_DIR}/${GGUF_PATH}`), { recursive: true });
  writeFileSync(`${OUT_DIR}/${GGUF_PATH}`, fixtureGguf(BENCH_OPTIONS));
  writeFileSync(`${OUT_DIR}/${EMBED_PATH}`, fixtureEmbeddingGguf(BENCH_OPTIONS));
  const vision = fixtureVisionGguf();
  writeFileSync(`${OUT_DIR}/${VISION_PATH}`, vision.model);
  writeFileSync(`${OUT_DIR}/${VISION.fixture.mmproj}`, vision.mmproj);
  writeFileSync(
    `${OUT_DIR}/${VISION.bench.mmproj}`,
    fixtureVisionGguf(VISION_BENCH_OPTIONS).mmproj,
  );
  await build({
    configFile: false,
    logLevel: 'warn',
    publicDir: false,
    build: {
      outDir: `${OUT_DIR}/bench/floor`,
      emptyOutDir: false,
      lib: {
        entry: 'bench/floor/floor-sw.ts',
        formats: ['iife'],
        name: 'floor',
        fileName: () => 'floor-sw.js',
      },
    },
  });
  return preview({ logLevel: 'warn' });
}

/**
 * Latencies of `n` sequential non-streamed requests made by `page`, as means over runs of ten:
 * browsers coarsen `performance.now()` to 0.1 ms, too coarse for single requests of ~2 ms.
 */
function requestLatencies(page, url, n, warmup) {
  const body = JSON.stringify({
    model: 'hearth/echo',
    messages: [{ role: 'user', content: 'Hello there, how are you today?' }],
    max_tokens: 16,
  });
  return page.evaluate(
    async ({ url, n, warmup, body, KEY }) => {
      const init = {
        method: 'POST',
        headers: { authorization: KEY, 'content-type': 'application/json' },
        body,
      };
      for (let i = 0; i < warmup; i += 1) await (await fetch(url, init)).text();
      const out = [];
      for (let i = 0; i < n; i += 10) {
        const started = performance.now();
        for (let j = 0; j < 10; j += 1) {
          const response = await fetch(url, init);
          await response.text();
          if (response.status !== 200) throw new Error(`status ${response.status}`);
        }
        out.push((performance.now() - started) / 10);
      }
      return out;
    },
    { url, n, warmup, body, KEY },
  );
}

/** Events per second of one streamed reply of `tokens` tokens, read with fetch. */
function streamRate(page, url, tokens) {
  return page.evaluate(
    async ({ url, content, KEY }) => {
      const started = performance.now();
      const response = await fetch(url, {
        method: 'POST',
        headers: { authorization: KEY, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'hearth/echo',
          messages: [{ role: 'user', content }],
          stream: true,
        }),
      });
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let events = 0;
      let tail = '';
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        const text = tail + value;
        let at = text.indexOf('\n\n');
        let from = 0;
        while (at !== -1) {
          events += 1;
          from = at + 2;
          at = text.indexOf('\n\n', from);
        }
        tail = text.slice(from);
      }
      const seconds = (performance.now() - started) / 1000;
      return { events, perSecond: events / seconds };
    },
    { url, content: words(tokens), KEY },
  );
}

/** `--site`: the site's rows alone, in a browser of their own. */
async function siteRows(executablePath) {
  const browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
  try {
    const log = (what) => process.stderr.write(`bench: ${what}\n`);
    const results = await measureSite({ browser, sizes: N.site, log });
    return { results, chromium: browser.version() };
  } finally {
    await browser.close();
  }
}

async function main() {
  const executablePath = await findChromium();
  if (!executablePath) throw new Error(browserHelp('chromium'));
  if (siteOnly) return siteRows(executablePath);
  const server = await buildBench();
  const origin = `http://127.0.0.1:${PORT}`;
  const browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });

  try {
    const context = await browser.newContext();
    const app = await context.newPage();
    await app.goto(`${origin}/`);
    await app.waitForSelector('api-status[state="ready"]');
    const bench = await context.newPage();
    await bench.goto(`${origin}/bench/`);
    await bench.waitForFunction(
      () => navigator.serviceWorker.controller !== null && 'bench' in globalThis,
    );
    const floor = await context.newPage();
    await floor.goto(`${origin}/bench/floor/`);
    await floor.waitForFunction(() => document.documentElement.dataset.ready === 'true');
    const api = `${origin}/v1/openai/chat/completions`;
    const floorApi = `${origin}/bench/floor/v1/openai/chat/completions`;
    const results = {};
    const log = (what) => process.stderr.write(`bench: ${what}\n`);
    if (documentsOnly) {
      // The search in Node, then indexing and file_search in this app (bench/documents-app.mjs).
      const app = { page: bench, embedModel: EMBED_ID };
      return { results: await measureDocuments({ quick, log, app }), chromium: browser.version() };
    }
    const measureVisionRows = async () =>
      Object.assign(
        results,
        await measureVision({
          page: bench,
          models: { fixture: VISION.fixture.id, bench: VISION.bench.id },
          sizes: N.vision,
          log,
        }),
      );
    if (visionOnly) {
      await measureVisionRows();
      return { results, chromium: browser.version() };
    }
    if (embedOnly) {
      Object.assign(
        results,
        await measureEmbed({ page: bench, model: EMBED_ID, sizes: N.embed, log }),
      );
      return { results, chromium: browser.version() };
    }
    const measureServerRows = async () =>
      Object.assign(
        results,
        await measureServers({ page: bench, floorPage: floor, origin, sizes: N.servers, log }),
      );
    if (serversOnly) {
      await measureServerRows();
      return { results, chromium: browser.version() };
    }
    const measureResponsesRows = async () =>
      Object.assign(
        results,
        await measureResponses({ page: bench, origin, sizes: N.responses, log }),
      );
    if (responsesOnly) {
      await measureResponsesRows();
      return { results, chromium: browser.version() };
    }

    if (!streamOnly) {
      log(`${N.requests} requests each, alternating the floor and the API`);
      const ours = [];
      const floors = [];
      const blocks = 5;
      for (let b = 0; b < blocks; b += 1) {
        floors.push(
          ...(await requestLatencies(floor, floorApi, N.requests / blocks, b === 0 ? N.warmup : 5)),
        );
        ours.push(
          ...(await requestLatencies(bench, api, N.requests / blocks, b === 0 ? N.warmup : 5)),
        );
      }
      results.request_ms_p50 = round(median(ours), 3);
      results.floor_ms_p50 = round(median(floors), 3);
      results.request_ratio_vs_floor = round(results.request_ms_p50 / results.floor_ms_p50);
      if (llamaOnly) {
        Object.assign(
          results,
          await measureLlama({ browser, page: bench, model: GGUF_ID, sizes: N.llama, log }),
        );
        return { results, chromium: browser.version() };
      }
    } else {
      // Both warmed up, as the latency rows would have done.
      await streamRate(floor, floorApi, 1000);
      await streamRate(bench, api, 1000);
    }

    log(`a ${N.streamTokens}-token stream, ${N.streamRuns} times each`);
    const ourRates = [];
    const floorRates = [];
    for (let r = 0; r < N.streamRuns; r += 1) {
      const f = await streamRate(floor, floorApi, N.streamTokens);
      const o = await streamRate(bench, api, N.streamTokens);
      if (o.events !== f.events) throw new Error(`event counts differ: ${o.events} vs ${f.events}`);
      floorRates.push(f.perSecond);
      ourRates.push(o.perSecond);
    }
    results.stream_chunks_per_s = Math.round(median(ourRates));
    results.floor_stream_chunks_per_s = Math.round(median(floorRates));
    results.stream_ratio_vs_floor = round(
      results.stream_chunks_per_s / results.floor_stream_chunks_per_s,
    );
    if (streamOnly) return { results, chromium: browser.version() };

    log(
      `the openai SDK reading ${N.sdkTokens} tokens at echo_delay_ms 1, through the API and in the page`,
    );
    const sdk = await bench.evaluate(
      async ({ origin, content, runs }) => {
        const { OpenAI, inPageFetch } = globalThis.bench;
        const options = {
          baseURL: `${origin}/v1/openai`,
          apiKey: 'bench',
          dangerouslyAllowBrowser: true,
        };
        const viaApi = new OpenAI(options);
        const inPage = new OpenAI({ ...options, fetch: inPageFetch });
        const read = async (client) => {
          const started = performance.now();
          const stream = await client.chat.completions.create({
            model: 'hearth/echo',
            messages: [{ role: 'user', content }],
            stream: true,
            echo_delay_ms: 1,
          });
          let text = '';
          for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
          if (text !== content) throw new Error('the SDK read a different reply');
          return performance.now() - started;
        };
        const api = [];
        const page = [];
        for (let r = 0; r < runs; r += 1) {
          page.push(await read(inPage));
          api.push(await read(viaApi));
        }
        return { api, page };
      },
      { origin, content: words(N.sdkTokens), runs: N.sdkRuns },
    );
    results.sdk_ms = Math.round(median(sdk.api));
    results.sdk_in_page_ms = Math.round(median(sdk.page));
    results.sdk_ratio_at_1k_tps = round(results.sdk_ms / results.sdk_in_page_ms, 3);

    log(`time to first token at echo_delay_ms 10, ${N.ttftRuns} times each`);
    const ttft = await bench.evaluate(
      async ({ api, runs, KEY }) => {
        const viaApi = [];
        const direct = [];
        const headers = { authorization: KEY, 'content-type': 'application/json' };
        const warm = JSON.stringify({
          model: 'hearth/echo',
          messages: [{ role: 'user', content: 'w' }],
        });
        for (let r = 0; r < runs; r += 1) {
          direct.push(await globalThis.bench.directFirstToken('a b c', 10));
          // The floor is measured back to back, its threads awake; so is this. (Waking idle
          // threads is the platform's cost, which a bare service worker would pay as well.)
          await (await fetch(api, { method: 'POST', headers, body: warm })).text();
          const abort = new AbortController();
          const started = performance.now();
          const response = await fetch(api, {
            method: 'POST',
            signal: abort.signal,
            headers,
            body: JSON.stringify({
              model: 'hearth/echo',
              messages: [{ role: 'user', content: 'a b c' }],
              stream: true,
              echo_delay_ms: 10,
            }),
          });
          await response.body.getReader().read();
          viaApi.push(performance.now() - started);
          abort.abort();
          // Let the cancelled request wind down before the next measurement.
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        return { viaApi, direct };
      },
      { api, runs: N.ttftRuns, KEY },
    );
    results.ttft_api_ms = round(median(ttft.viaApi));
    results.ttft_direct_ms = round(median(ttft.direct));
    // Runs alternate, so each API run is paired with the direct run just before it: the median
    // of the differences is steadier than the difference of the medians on a busy machine.
    results.ttft_added_ms = round(median(ttft.viaApi.map((t, i) => t - ttft.direct[i])));

    await measureResponsesRows();

    log(`worker and service-worker heap around a ${N.memoryTokens}-token stream`);
    await streamRate(bench, api, 1000); // warm both workers up
    const before = await workerHeaps(browser);
    const big = await streamRate(bench, api, N.memoryTokens);
    if (big.events !== N.memoryTokens + 2)
      throw new Error(`the long stream had ${big.events} events`);
    const after = await workerHeaps(browser);
    results.memory_growth_mb = round((after - before) / (1024 * 1024));

    log('3 tabs × 10 parallel requests');
    const tabs = [app, await context.newPage(), await context.newPage()];
    for (const tab of tabs.slice(1)) {
      await tab.goto(`${origin}/`);
      await tab.waitForSelector('api-status[state="ready"]');
    }
    const counts = await Promise.all(
      tabs.map((tab, t) =>
        tab.evaluate(
          async ({ t, KEY }) => {
            const one = async (i) => {
              const content = `tab ${t} request ${i} says hello`;
              const response = await fetch('v1/openai/chat/completions', {
                method: 'POST',
                headers: { authorization: KEY, 'content-type': 'application/json' },
                body: JSON.stringify({
                  model: 'hearth/echo',
                  messages: [{ role: 'user', content }],
                  stream: i % 2 === 0,
                  echo_delay_ms: 2,
                }),
              });
              const text = await response.text();
              if (i % 2 === 1) return JSON.parse(text).choices[0].message.content === content;
              const deltas = text
                .split('\n\n')
                .filter((e) => e.startsWith('data: {'))
                .map((e) => JSON.parse(e.slice(6)).choices[0]?.delta?.content ?? '');
              return deltas.join('') === content && text.endsWith('data: [DONE]\n\n');
            };
            const ok = await Promise.all(Array.from({ length: 10 }, (_, i) => one(i)));
            return ok.filter(Boolean).length;
          },
          { t, KEY },
        ),
      ),
    );
    results.concurrent_ok = counts.reduce((a, b) => a + b, 0);
    // Every tab re-renders on each status the host publishes: only the host stays for llama.cpp.
    await Promise.all(tabs.slice(1).map((tab) => tab.close()));

    // Before llama.cpp, whose memory would weigh on them.
    await measureServerRows();

    // llama.cpp last: once loaded, its memory would weigh on the rows above.
    Object.assign(
      results,
      await measureLlama({ browser, page: bench, model: GGUF_ID, sizes: N.llama, log }),
    );
    await measureVisionRows();
    // Embeddings last of all: their model loads beside the chat model.
    Object.assign(
      results,
      await measureEmbed({ page: bench, model: EMBED_ID, sizes: N.embed, log }),
    );
    return { results, chromium: browser.version() };
  } finally {
    await browser.close();
    await new Promise((resolve) => server.httpServer.close(resolve));
  }
}

const TARGETS = [
  [
    'request_ratio_vs_floor',
    'non-streamed request latency ÷ floor (p50)',
    (v) => v <= 1.25,
    '≤ 1.25',
  ],
  ['request_ms_p50', 'non-streamed request through the API, ms (p50)', null, ''],
  ['floor_ms_p50', 'the same, bare service worker, ms (p50)', null, ''],
  ['stream_ratio_vs_floor', 'stream events/s ÷ floor', (v) => v >= 0.9, '≥ 0.9'],
  ['stream_chunks_per_s', 'stream events/s through the API', null, ''],
  ['floor_stream_chunks_per_s', 'stream events/s, bare service worker', null, ''],
  ['sdk_ratio_at_1k_tps', 'openai SDK wall time, API ÷ in the page', (v) => v <= 1.05, '≤ 1.05'],
  [
    'ttft_added_ms',
    'time to first token added by the API, ms',
    (v, r) => v <= 1.5 * r.floor_ms_p50,
    '≤ 1.5 × floor_ms_p50',
  ],
  ['memory_growth_mb', 'worker + service-worker heap growth, MB', (v) => v <= 5, '≤ 5'],
  ['concurrent_ok', '3 tabs × 10 parallel requests answered right', (v) => v === 30, '30'],
  ...RESPONSES_TARGETS,
  ...LLAMA_TARGETS,
  ...SERVER_TARGETS,
  ...EMBED_TARGETS,
  ...VISION_TARGETS,
  // Measured only when asked for (`--site`): a full run leaves them out.
  ...(siteOnly ? SITE_TARGETS : []),
  ...(documentsOnly ? DOCUMENTS_TARGETS : []),
];

const { results, chromium: version } = await main();
const rows = TARGETS.filter(([key]) => !partial || key in results).map(
  ([key, what, check, target]) => {
    const value = results[key];
    const missing = value == null || Number.isNaN(value);
    const verdict = !check ? '' : missing ? 'n/a' : check(value, results) ? 'met' : 'MISSED';
    return { key, what, value, target, verdict };
  },
);
const width = (k) => Math.max(...rows.map((r) => String(r[k]).length), k.length);
const line = (r) =>
  ['key', 'value', 'target', 'verdict', 'what']
    .map((k) => String(r[k]).padEnd(width(k)))
    .join('  ');
console.log(
  line({ key: 'key', value: 'value', target: 'target', verdict: 'verdict', what: 'what' }),
);
for (const row of rows) console.log(line(row));
// `--site`: the feature's lines of code against WebLLM's, and prepare()'s first token, as tables.
if (siteOnly) console.log(`\n${siteTables(results)}`);

const report = {
  date: new Date().toISOString(),
  quick,
  ...(streamOnly && { stream_only: true }),
  ...(responsesOnly && { responses_only: true }),
  ...(embedOnly && { embed_only: true }),
  ...(visionOnly && { vision_only: true }),
  ...(serversOnly && { servers_only: true }),
  ...(llamaOnly && { llama_only: true }),
  ...(siteOnly && { site_only: true }),
  ...(documentsOnly && { documents_only: true }),
  machine: {
    chromium: version,
    cpus: cpus().length,
    cpu: cpus()[0]?.model ?? 'unknown',
    node: process.version,
  },
  ...results,
};
mkdirSync('bench/results', { recursive: true });
// A partial run writes a file of its own, and leaves latest.json (a full run's) whole.
const name = quick
  ? 'quick'
  : streamOnly
    ? 'stream'
    : responsesOnly
      ? 'responses'
      : embedOnly
        ? 'embed'
        : visionOnly
          ? 'vision'
          : serversOnly
            ? 'servers'
            : llamaOnly
              ? 'llama'
              : siteOnly
                ? 'site'
                : documentsOnly
                  ? 'documents'
                  : 'latest';
const file = `bench/results/${name}.json`;
writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
console.log(`\nwrote ${file}`);
