// The embedding rows of `npm run bench`: llama.cpp (wllama) on the benchmark embedding GGUF
// (scripts/fixture-gguf.mjs, ~50 MB, width 512), on the CPU: inputs per second through
// `POST /v1/openai/embeddings` against the same engine instance called directly in the same
// engine worker (src/engine-host/bench-hook.ts), in the same run, alternating, for requests of
// one input and of 64.
import { FIXTURE_EMBEDDING_WORDS } from '../scripts/fixture-gguf.mjs';
import { median, round } from './stats.mjs';

const KEY = 'Bearer bench';
/**
 * Words of one input (one token each, and `<s>` and `</s>`): a request of one input carries a
 * passage of the size retrieval usually embeds (~130 tokens); a request of 64, short ones.
 */
const INPUT_WORDS = { 1: 128, 64: 16 };

/**
 * @typedef {object} EmbedSizes
 * @property {number} b1BudgetS no further round of requests of 1 input starts after this long
 * @property {number} b64BudgetS no further round of requests of 64 inputs starts after this long
 * @property {number} minRounds rounds of each size that run whatever the time
 */

/**
 * `n` inputs of `words` fixture words each, different from one another (a fixed pseudo-random
 * sequence: the same texts every run).
 * @param {number} n
 * @param {number} words
 */
function texts(n, words) {
  let seed = 12345;
  const next = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed;
  };
  return Array.from({ length: n }, () =>
    Array.from(
      { length: words },
      () => FIXTURE_EMBEDDING_WORDS[next() % FIXTURE_EMBEDDING_WORDS.length],
    ).join(' '),
  );
}

/**
 * The ways one batch is embedded, in the order of a round's first; `echo` is no embedding but a
 * one-token chat request to the echo engine through the API, the API's own cost per request.
 * @typedef {'direct' | 'api' | 'base64' | 'echo'} Way
 */

/**
 * @typedef {object} Rounds what each round of requests took each way, ms, timed where made
 * @property {number[]} direct the engine called directly, timed in the engine worker
 * @property {number[]} api `fetch` of the API, JSON floats, body read and parsed, timed in the page
 * @property {number[]} base64 the same with `encoding_format: "base64"`, vectors decoded
 * @property {number[]} echo a one-token echo chat request through the API (where asked)
 * @property {number} dimensions the length of the last vector
 */

/**
 * Rounds of `batches`: each round embeds its batch once each way (direct, the API with JSON
 * floats, the API with base64; with `echo`, also an echo request), in a rotating order, so that
 * the machine's drift and a warmer engine hit all ways alike. Rounds go on until `budgetMs` has
 * passed and at least `minRounds` ran. Runs in the page, so that no round trip to Node comes
 * between the ways.
 * @param {import('playwright-core').Page} page
 * @param {{ model: string, batches: string[][], minRounds: number, budgetMs: number, echo?: boolean }} options
 * @returns {Promise<Rounds>}
 */
function rounds(page, options) {
  return page.evaluate(
    async ({ model, batches, minRounds, budgetMs, echo, KEY }) => {
      /** @type {Way[]} */
      const ways = ['direct', 'api', 'base64', ...(echo ? /** @type {const} */ (['echo']) : [])];
      const headers = { authorization: KEY, 'content-type': 'application/json' };
      let dimensions = 0;
      /** @param {string[]} input @param {'float' | 'base64'} encoding */
      const viaApi = async (input, encoding) => {
        const started = performance.now();
        const response = await fetch('/v1/openai/embeddings', {
          method: 'POST',
          headers,
          body: JSON.stringify({ model, input, encoding_format: encoding }),
        });
        if (!response.ok) throw new Error(`status ${response.status}: ${await response.text()}`);
        /** @type {{ data: { embedding: number[] | string }[] }} */
        const body = await response.json();
        // A client's work with the vectors: base64 decoded to float32, as the SDK does.
        const vectors = body.data.map(({ embedding }) =>
          typeof embedding === 'string'
            ? new Float32Array(Uint8Array.from(atob(embedding), (c) => c.charCodeAt(0)).buffer)
            : embedding,
        );
        const ms = performance.now() - started;
        if (vectors.length !== input.length) throw new Error(`${vectors.length} vectors`);
        dimensions = vectors.at(-1)?.length ?? 0;
        return ms;
      };
      /** @param {string[]} input */
      const direct = async (input) => {
        /** @type {{ ms: number, vectors: number }} */
        const run = await /** @type {any} */ (globalThis).bench.llama({
          type: 'embed',
          model,
          batches: [input],
        });
        if (run.vectors !== input.length) throw new Error(`${run.vectors} vectors`);
        return run.ms;
      };
      const viaEcho = async () => {
        const started = performance.now();
        const response = await fetch('/v1/openai/chat/completions', {
          method: 'POST',
          headers,
          body: JSON.stringify({
            model: 'hearth/echo',
            messages: [{ role: 'user', content: 'w' }],
            max_tokens: 1,
          }),
        });
        if (!response.ok) throw new Error(`echo: ${response.status}`);
        await response.json();
        return performance.now() - started;
      };
      /** @type {Record<Way, number[]>} */
      const out = { direct: [], api: [], base64: [], echo: [] };
      const started = performance.now();
      for (let r = 0; r < minRounds || performance.now() - started < budgetMs; r += 1) {
        const input = batches[r % batches.length] ?? [];
        for (let i = 0; i < ways.length; i += 1) {
          const way = ways[(r + i) % ways.length] ?? 'direct';
          out[way].push(
            way === 'direct'
              ? await direct(input)
              : way === 'echo'
                ? await viaEcho()
                : await viaApi(input, way === 'api' ? 'float' : 'base64'),
          );
        }
      }
      return { ...out, dimensions };
    },
    { echo: false, ...options, KEY },
  );
}

/**
 * `inputs` split into requests of `batch` inputs.
 * @param {string[]} inputs
 * @param {number} batch
 */
const split = (inputs, batch) =>
  Array.from({ length: Math.ceil(inputs.length / batch) }, (_, i) =>
    inputs.slice(i * batch, (i + 1) * batch),
  );

/**
 * A request of the page under the app's scope; throws with its body unless 200.
 * @param {import('playwright-core').Page} page
 * @param {string} method
 * @param {string} path
 */
async function call(page, method, path) {
  const { status, text } = await page.evaluate(
    async ({ method, path, KEY }) => {
      const response = await fetch(path, { method, headers: { authorization: KEY } });
      return { status: response.status, text: await response.text() };
    },
    { method, path, KEY },
  );
  if (status !== 200) throw new Error(`${method} ${path}: ${status} ${text}`);
  return text;
}

/**
 * Downloads and loads the benchmark embedding GGUF through the API (beside the chat model, if one
 * is loaded), with the app's default threads, then measures requests of 1 and of 64 inputs,
 * through the API (JSON floats, and base64) and directly, in turn. Keys: `embed_<what>_b1` and
 * `embed_<what>_b64`, `embed_threads`, `embed_dimensions`.
 * @param {{ page: import('playwright-core').Page, model: string, sizes: EmbedSizes, log: (what: string) => void }} options
 */
export async function measureEmbed({ page, model, sizes, log }) {
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
  /** @type {Record<string, number | null>} */
  const results = { embed_threads: threads };

  // Warm up (the first requests after a load are slower), each way.
  await rounds(page, { model, batches: split(texts(16, 16), 8), minRounds: 3, budgetMs: 0 });

  for (const [batch, budgetS] of /** @type {const} */ ([
    [1, sizes.b1BudgetS],
    [64, sizes.b64BudgetS],
  ])) {
    const s = `b${batch}`;
    log(`embeddings, requests of ${batch} input(s), each way in turn, for ${budgetS} s`);
    const timed = await rounds(page, {
      model,
      batches: split(texts(batch * 16, INPUT_WORDS[batch]), batch),
      minRounds: sizes.minRounds,
      budgetMs: budgetS * 1000,
      echo: batch === 1,
    });
    results.embed_dimensions = timed.dimensions;
    /** @param {number[]} ms */
    const perSecond = (ms) => round((batch * 1000) / median(ms), 1);
    results[`embed_rounds_${s}`] = timed.direct.length;
    results[`embed_per_s_${s}`] = perSecond(timed.api);
    results[`embed_base64_per_s_${s}`] = perSecond(timed.base64);
    results[`embed_direct_per_s_${s}`] = perSecond(timed.direct);
    // Each round's ratio, then their median: steadier on a busy machine than a ratio of medians.
    /** @param {number[]} ms */
    const ratio = (ms) => round(median(ms.map((t, i) => (timed.direct[i] ?? NaN) / t)), 3);
    results[`embed_ratio_${s}`] = ratio(timed.api);
    results[`embed_base64_ratio_${s}`] = ratio(timed.base64);
    // What the API adds to one request, ms: the median of each round's difference.
    results[`embed_added_ms_${s}`] = round(
      median(timed.api.map((t, i) => t - (timed.direct[i] ?? NaN))),
    );
    if (batch === 1) {
      // What any request through the API costs, measured in the same rounds: embed_added_ms_b1
      // near it means the embeddings path adds nothing of its own.
      results.embed_echo_ms_b1 = round(median(timed.echo));
      // The b1 ratio if the API added only that: the most a request of one input can reach here.
      results.embed_ratio_ceiling_b1 = round(
        median(timed.direct.map((t, i) => t / (t + (timed.echo[i] ?? NaN)))),
        3,
      );
    }
  }
  return results;
}

/** @param {number} v */
const ratioTarget = (v) => v >= 0.95;

/** The table's rows: [key, what, check, target], as bench/run.mjs prints them. */
export const EMBED_TARGETS = [
  [1, `requests of 1 input of ${INPUT_WORDS[1]} words`],
  [64, `requests of 64 inputs of ${INPUT_WORDS[64]} words`],
].flatMap(([batch, what]) => [
  [
    `embed_ratio_b${batch}`,
    `llama.cpp embeddings inputs/s, API (JSON floats) ÷ direct, ${what}`,
    ratioTarget,
    '≥ 0.95',
  ],
  [`embed_per_s_b${batch}`, `embeddings inputs/s through the API (JSON floats), ${what}`, null, ''],
  [`embed_direct_per_s_b${batch}`, `the same, engine called directly, ${what}`, null, ''],
  [
    `embed_base64_ratio_b${batch}`,
    `the same ratio with encoding_format "base64", ${what}`,
    null,
    '',
  ],
  [
    `embed_base64_per_s_b${batch}`,
    `embeddings inputs/s through the API (base64), ${what}`,
    null,
    '',
  ],
  [
    `embed_added_ms_b${batch}`,
    `time the API adds to one request (JSON floats), ms, ${what}`,
    null,
    '',
  ],
  ...(batch === 1
    ? [
        [
          'embed_echo_ms_b1',
          'a one-token echo chat request through the API, same rounds, ms',
          null,
          '',
        ],
        [
          'embed_ratio_ceiling_b1',
          'direct ÷ (direct + echo request): embed_ratio_b1 if embeddings added nothing of their own',
          null,
          '',
        ],
      ]
    : []),
  [`embed_rounds_b${batch}`, `rounds measured (each way once a round), ${what}`, null, ''],
]);
EMBED_TARGETS.push([
  'embed_threads',
  'llama.cpp threads of the embedding rows (the default, cores ÷ 2)',
  null,
  '',
]);
