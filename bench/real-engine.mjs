// The real-engine rows of `npm run bench`: llama.cpp (wllama) on the benchmark GGUF, on the CPU,
// through the API against the same engine called directly in the same engine worker, in the same
// run (src/engine-host/bench-hook.ts), with one thread and with min(4, cores).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { attachToWorkers } from '../scripts/cdp-workers.mjs';
import { median, round } from './stats.mjs';

const KEY = 'Bearer bench';
const PROMPT = 'Tell me a story about a fox.';

/**
 * @typedef {object} LlamaSizes
 * @property {number} decodeSeconds what one decode run should take, which sets its tokens
 * @property {number} maxTokens the most tokens of one decode run
 * @property {number} decodePairs decode runs, each one direct and one through the API
 * @property {number} decodeBudgetS no further pair starts after this many seconds (one always runs)
 * @property {number} ttftRuns first-token runs, each one direct and one through the API
 * @property {number} ttftBudgetS no further run starts after this many seconds (three always run)
 */

const MB = 1024 * 1024;

/**
 * @typedef {object} Run one generation, timed where it was read
 * @property {number} ttft_ms from the call (or fetch) to the first token
 * @property {number[]} times when each token came, ms after the first
 * @property {number | null} engine_tps llama.cpp's own decode tokens/s
 */

/** @param {Run} run tokens per second from the first token to the last */
const decodeRate = (run) => ((run.times.length - 1) * 1000) / (run.times.at(-1) ?? NaN);

/**
 * Chromium's renderer processes (Linux: /proc), each with its resident bytes and its threads of
 * dedicated workers; null where the system does not show them. The engine's process is the one
 * with the most such threads: the engine worker, wllama's worker and llama.cpp's threads.
 * llama.cpp's memory is WebAssembly memory in wllama's worker, which no heap count over CDP
 * includes.
 * @param {import('playwright-core').Browser} browser
 * @returns {Promise<Map<number, { rss: number, workers: number }> | null>}
 */
async function renderers(browser) {
  if (!existsSync('/proc/self/task')) return null;
  const cdp = await browser.newBrowserCDPSession();
  try {
    const { processInfo } = await cdp.send('SystemInfo.getProcessInfo');
    const found = new Map();
    for (const { type, id } of processInfo) {
      if (type !== 'renderer') continue;
      try {
        const status = readFileSync(`/proc/${id}/status`, 'utf8');
        const rss = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
        const workers = readdirSync(`/proc/${id}/task`).filter((task) =>
          readFileSync(`/proc/${id}/task/${task}/comm`, 'utf8').startsWith('DedicatedWorker'),
        ).length;
        found.set(id, { rss, workers });
      } catch {
        // A renderer that has just exited.
      }
    }
    return found;
  } finally {
    await cdp.detach();
  }
}

/**
 * Bytes the engine's renderer process grew by from `before` to `after`, or null.
 * @param {Awaited<ReturnType<typeof renderers>>} before
 * @param {Awaited<ReturnType<typeof renderers>>} after
 */
function engineProcessGrowth(before, after) {
  if (!before || !after) return null;
  const [pid] = [...after].sort(([, a], [, b]) => b.workers - a.workers)[0] ?? [];
  const was = pid === undefined ? undefined : before.get(pid);
  const is = pid === undefined ? undefined : after.get(pid);
  return was && is ? is.rss - was.rss : null;
}

/**
 * The engine worker's JavaScript heap, after full garbage collections.
 * @param {import('playwright-core').Browser} browser
 */
async function engineWorkerHeap(browser) {
  const { workers, close } = await attachToWorkers(browser);
  try {
    const worker = workers.find((w) => w.type === 'worker');
    if (!worker) throw new Error('no engine worker');
    await worker.call('HeapProfiler.collectGarbage');
    await worker.call('HeapProfiler.collectGarbage');
    return (await worker.call('Runtime.getHeapUsage')).usedSize;
  } finally {
    await close();
  }
}

/**
 * A request of the page under the app's scope; its JSON, or an error with its body.
 * @param {import('playwright-core').Page} page
 * @param {string} method
 * @param {string} path the bench build is at the origin's root
 */
export async function call(page, method, path) {
  const { status, text, ms } = await page.evaluate(
    async ({ method, path, KEY }) => {
      const started = performance.now();
      const response = await fetch(path, { method, headers: { authorization: KEY } });
      const text = await response.text();
      return { status: response.status, text, ms: performance.now() - started };
    },
    { method, path, KEY },
  );
  if (status !== 200) throw new Error(`${method} ${path}: ${status} ${text}`);
  return { ms, text };
}

/**
 * @typedef {object} Stop when to stop a generation early, as a client that aborts
 * @property {boolean} [firstOnly] after its first token
 * @property {number} [maxMs] after the first token that comes this long after the call
 */

/**
 * One streamed chat request through the API, read with fetch and timed in the page: to the first
 * token, then from the first token to the last.
 * @param {import('playwright-core').Page} page
 * @param {object} body
 * @param {Stop} [stop]
 * @returns {Promise<Run>}
 */
export function viaApi(page, body, { firstOnly = false, maxMs = Infinity } = {}) {
  return page.evaluate(
    async ({ body, firstOnly, maxMs, KEY }) => {
      const abort = new AbortController();
      const started = performance.now();
      const response = await fetch('/v1/openai/chat/completions', {
        method: 'POST',
        signal: abort.signal,
        headers: { authorization: KEY, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (!response.ok) throw new Error(`status ${response.status}: ${await response.text()}`);
      const reader = /** @type {ReadableStream<Uint8Array>} */ (response.body).getReader();
      const decoder = new TextDecoder();
      let first = 0;
      /** @type {number[]} */
      const times = [];
      /** @type {number | null} */
      let engineTps = null;
      let tail = '';
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        const now = performance.now();
        const events = (tail + decoder.decode(value, { stream: true })).split('\n\n');
        tail = events.pop() ?? '';
        for (const event of events) {
          // llama.cpp's own speed figures travel as an SSE comment (src/api/completion.ts).
          const speed = /^: hearth-speed (.*)$/m.exec(event);
          if (speed) engineTps = JSON.parse(speed[1] ?? '{}').decode_tokens_per_s ?? null;
          if (!event.startsWith('data: {')) continue;
          const parsed = JSON.parse(event.slice('data: '.length));
          if (parsed.error) throw new Error(parsed.error.message);
          if (typeof parsed.choices?.[0]?.delta?.content !== 'string') continue;
          if (times.length === 0) first = now;
          times.push(now - first);
        }
        if (times.length > 0 && (firstOnly || performance.now() - started > maxMs)) {
          abort.abort();
          break;
        }
      }
      return { ttft_ms: first - started, times, engine_tps: engineTps };
    },
    // Infinity does not survive the trip into the page.
    { body, firstOnly, maxMs: Number.isFinite(maxMs) ? maxMs : 1e12, KEY },
  );
}

/**
 * The same request given to the engine worker's llama.cpp engine directly, timed in the worker.
 * @param {import('playwright-core').Page} page
 * @param {object} body
 * @param {Stop} [stop]
 * @returns {Promise<Run>}
 */
function direct(page, body, { firstOnly = false, maxMs } = {}) {
  return page.evaluate(
    ({ body, firstOnly, maxMs }) =>
      /** @type {any} */ (globalThis).bench.llama({
        type: 'generate',
        body,
        first_only: firstOnly,
        ...(maxMs !== undefined && { max_ms: maxMs }),
      }),
    { body, firstOnly, maxMs },
  );
}

/**
 * A chat request of `maxTokens` tokens, end of generation ignored, greedy.
 * @param {string} model
 * @param {number} maxTokens
 */
const chat = (model, maxTokens) => ({
  model,
  messages: [{ role: 'user', content: PROMPT }],
  stream: true,
  max_tokens: maxTokens,
  ignore_eos: true,
  temperature: 0,
});

/**
 * Loads the model with `threads` threads and measures it both ways.
 * @param {{ browser: import('playwright-core').Browser, page: import('playwright-core').Page, model: string, threads: number, sizes: LlamaSizes, log: (what: string) => void }} options
 */
async function measureThreads({ browser, page, model, threads, sizes, log }) {
  /** @type {Record<string, number | null>} */
  const out = {};
  await page.evaluate(
    (threads) => /** @type {any} */ (globalThis).bench.llama({ type: 'threads', threads }),
    threads,
  );
  await call(page, 'POST', '/v1/hearth/unload');
  const before = await renderers(browser);
  const load = await call(page, 'POST', `/v1/hearth/models/${model}/load`);
  out.load_ms = Math.round(load.ms);
  const status = JSON.parse((await call(page, 'GET', '/v1/hearth/status')).text);
  if (status.llama?.backend !== 'cpu' || status.llama?.threads !== threads) {
    throw new Error(`llama.cpp runs ${JSON.stringify(status.llama)}, not ${threads} on the CPU`);
  }

  // Warm up (the first generation after a load is slower), then size the decode runs so that
  // each takes about decodeSeconds on this machine.
  await direct(page, chat(model, 16));
  await viaApi(page, chat(model, 16));
  const probe = await direct(page, chat(model, 32));
  const tokens = Math.max(
    16,
    Math.min(sizes.maxTokens, Math.round(decodeRate(probe) * sizes.decodeSeconds)),
  );
  out.tokens = tokens;

  // Before each measured run, a one-token request given directly waits out whatever the last
  // cancelled one left running and wakes llama.cpp's threads, for both ways alike.
  const settle = () => direct(page, chat(model, 1));
  /**
   * First tokens of replies of `maxTokens` tokens (each stopped after its first), both ways;
   * each API run paired with the direct run just before it.
   * @param {number} maxTokens
   */
  const firstTokens = async (maxTokens) => {
    /** @type {number[]} */
    const api = [];
    /** @type {number[]} */
    const straight = [];
    const started = Date.now();
    for (let r = 0; r < sizes.ttftRuns; r += 1) {
      if (r >= 3 && Date.now() - started > sizes.ttftBudgetS * 1000) break;
      await settle();
      straight.push((await direct(page, chat(model, maxTokens), { firstOnly: true })).ttft_ms);
      await settle();
      api.push((await viaApi(page, chat(model, maxTokens), { firstOnly: true })).ttft_ms);
    }
    return {
      runs: api.length,
      api: round(median(api)),
      direct: round(median(straight)),
      added: round(median(api.map((t, i) => t - (straight[i] ?? NaN)))),
    };
  };
  log(`${threads} thread(s): time to first token, up to ${sizes.ttftRuns} runs each way`);
  const ttft = await firstTokens(16);
  out.ttft_runs = ttft.runs;
  out.ttft_api_ms = ttft.api;
  out.ttft_direct_ms = ttft.direct;
  out.ttft_added_ms = ttft.added;
  // The same for replies of one token: llama.cpp stops at the first, so nothing computes on the
  // cores while it travels to the page — what the API adds with the machine to itself.
  log(`${threads} thread(s): the same for one-token replies`);
  out.ttft_added_ms_alone = (await firstTokens(1)).added;

  // A run that the machine slows down much more than the probe is cut at twice its time.
  const stop = { maxMs: 2 * sizes.decodeSeconds * 1000 };
  log(
    `${threads} thread(s): replies of ${tokens} tokens (cut at ${stop.maxMs / 1000} s), up to ${sizes.decodePairs} each way`,
  );
  /** @type {Record<'api' | 'direct' | 'ratio' | 'engine', number[]>} */
  const rates = { api: [], direct: [], ratio: [], engine: [] };
  const decodeStarted = Date.now();
  for (let r = 0; r < sizes.decodePairs; r += 1) {
    if (r >= 1 && Date.now() - decodeStarted > sizes.decodeBudgetS * 1000) break;
    // Alternately first, so that neither way always runs on a warmer engine.
    const [first, second] = r % 2 === 0 ? [direct, viaApi] : [viaApi, direct];
    const a = await first(page, chat(model, tokens), stop);
    const b = await second(page, chat(model, tokens), stop);
    const [d, api] = r % 2 === 0 ? [a, b] : [b, a];
    if (d.times.length < 2 || api.times.length < 2) continue; // no rate to compare
    rates.direct.push(decodeRate(d));
    rates.api.push(decodeRate(api));
    rates.ratio.push(decodeRate(api) / decodeRate(d));
    if (d.engine_tps && api.engine_tps) rates.engine.push(api.engine_tps / d.engine_tps);
  }
  out.decode_runs = rates.ratio.length;
  out.decode_tps = round(median(rates.api), 1);
  out.direct_decode_tps = round(median(rates.direct), 1);
  // Runs drift on a busy machine: the median of each pair's ratio is steadier than the ratio of
  // the medians.
  out.decode_ratio = round(median(rates.ratio), 3);
  // The same from llama.cpp's own timings: below decode_ratio, the API slowed the generation
  // itself (the machine's cores are shared), not only the delivery of its tokens.
  out.engine_decode_ratio = rates.engine.length > 0 ? round(median(rates.engine), 3) : null;

  const growth = engineProcessGrowth(before, await renderers(browser));
  out.memory_mb = growth === null ? null : round(growth / MB, 1);
  out.worker_heap_mb = round((await engineWorkerHeap(browser)) / MB);
  return out;
}

/**
 * Downloads the benchmark GGUF through the API, then measures it with one thread and with
 * min(4, cores) threads. Keys: `real_<what>_1t` and `real_<what>_mt` (null where the worker has
 * one core), `real_threads_mt`, `real_mt_speedup` (direct decode, multi- ÷ single-threaded).
 * @param {{ browser: import('playwright-core').Browser, page: import('playwright-core').Page, model: string, sizes: LlamaSizes, log: (what: string) => void }} options
 */
export async function measureLlama({ browser, page, model, sizes, log }) {
  log(`downloading ${model} through the API`);
  const download = await call(page, 'POST', `/v1/hearth/models/${model}/download`);
  if (!download.text.includes('"phase":"done"')) throw new Error('the download did not finish');
  const cores = await page.evaluate(() => navigator.hardwareConcurrency);
  const multi = Math.min(4, cores);
  /** @type {Record<string, number | null>} */
  const results = { real_threads_mt: multi > 1 ? multi : null, real_mt_speedup: null };
  const one = await measureThreads({ browser, page, model, threads: 1, sizes, log });
  for (const [key, value] of Object.entries(one)) results[`real_${key}_1t`] = value;
  if (multi > 1) {
    const many = await measureThreads({ browser, page, model, threads: multi, sizes, log });
    for (const [key, value] of Object.entries(many)) results[`real_${key}_mt`] = value;
    results.real_mt_speedup = round(Number(many.direct_decode_tps) / Number(one.direct_decode_tps));
  }
  return results;
}

/** @param {number} v */
const decodeTarget = (v) => v >= 0.98;
/**
 * @param {number} v
 * @param {Record<string, number>} r
 */
const ttftTarget = (v, r) => v <= 1.5 * (r.floor_ms_p50 ?? NaN);

/** The table's rows: [key, what, check, target], as bench/run.mjs prints them. */
export const LLAMA_TARGETS = [
  ['1t', 'one thread'],
  ['mt', 'min(4, cores) threads'],
].flatMap(([s, threads]) => [
  [
    `real_decode_ratio_${s}`,
    `llama.cpp decode tokens/s, API ÷ direct, ${threads}`,
    decodeTarget,
    '≥ 0.98',
  ],
  [`real_decode_tps_${s}`, `llama.cpp decode tokens/s through the API, ${threads}`, null, ''],
  [`real_direct_decode_tps_${s}`, `the same, engine called directly, ${threads}`, null, ''],
  [
    `real_ttft_added_ms_${s}`,
    `llama.cpp time to first token added by the API, ms, ${threads}`,
    ttftTarget,
    '≤ 1.5 × floor_ms_p50',
  ],
  [
    `real_ttft_added_ms_alone_${s}`,
    `the same for one-token replies: nothing else computes while the token travels, ms, ${threads}`,
    null,
    '',
  ],
  [
    `real_ttft_direct_ms_${s}`,
    `time to first token, engine called directly, ms, ${threads}`,
    null,
    '',
  ],
  [`real_load_ms_${s}`, `model load through the API, ms, ${threads}`, null, ''],
  [
    `real_memory_mb_${s}`,
    `engine's renderer process memory (RSS) added by the model, MB, ${threads}`,
    null,
    '',
  ],
  [
    `real_worker_heap_mb_${s}`,
    `engine worker's JS heap with the model loaded, MB, ${threads}`,
    null,
    '',
  ],
]);
LLAMA_TARGETS.push(
  ['real_threads_mt', 'llama.cpp threads of the multi-threaded rows, min(4, cores)', null, ''],
  ['real_mt_speedup', 'llama.cpp decode, direct, multi- ÷ single-threaded', null, ''],
);
