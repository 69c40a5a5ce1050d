// `npm run bench -- --documents`: documents on the device (issue 47), measured in Node on this
// machine — no browser, no build of the app. src/documents/search.ts is bundled as it ships (vite,
// into dist-bench-documents/) and run over 10,000 synthetic chunks: sentences of made-up words
// drawn with a Zipf-like distribution (a few words everywhere, most words rare, as in prose), ~600
// words a chunk (OpenAI's default chunk is 800 tokens), each with a random L2-normalised 384-wide
// vector (a small embedding model's width). Rows: the SearchIndex's build time, and a search's
// latency (p50/p95) against baselines of the same run — the brute-force cosine scan alone, and
// MiniSearch alone on the same words. Seeded, so every run searches the same chunks.
//
// More rows join through MEASUREMENTS and DOCUMENTS_TARGETS below: indexing throughput (pages and
// chunks a second for a 100-page PDF made at test time) and the search's share of a
// `file_search` turn's time to first token are measured in the built app, in headless Chromium
// (bench/documents-app.mjs), with the app bench/run.mjs opens.
import { cpus } from 'node:os';
import { pathToFileURL } from 'node:url';
import { build } from 'vite';
import { median, round } from './stats.mjs';
import { DOCUMENTS_APP_TARGETS, measureDocumentsApp } from './documents-app.mjs';

const OUT_DIR = 'dist-bench-documents';
const DIMENSIONS = 384;
const VOCABULARY = 30_000;

/** The sizes of a full run and of a quick one (`--quick`, to check the bench itself). */
const SIZES = {
  full: { chunks: 10_000, words: 600, queries: 200, warmup: 20, builds: 3 },
  quick: { chunks: 2_000, words: 600, queries: 30, warmup: 5, builds: 1 },
};

/**
 * A seeded generator of numbers in [0, 1) (mulberry32).
 * @param {number} seed
 * @returns {() => number}
 */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Made-up words of two to four syllables, all different, the commonest shortest.
 * @param {() => number} rand
 * @returns {string[]}
 */
function vocabulary(rand) {
  const onsets = ['b', 'd', 'f', 'g', 'k', 'l', 'm', 'n', 'p', 'r', 's', 't', 'v', 'z', 'st', 'br'];
  const vowels = ['a', 'e', 'i', 'o', 'u', 'ai', 'ou'];
  const words = new Set();
  while (words.size < VOCABULARY) {
    const syllables = 1 + Math.min(3, Math.floor((words.size / VOCABULARY) * 3 + rand() * 1.5));
    let word = '';
    for (let s = 0; s < syllables; s += 1) {
      word += `${onsets[Math.floor(rand() * onsets.length)]}${vowels[Math.floor(rand() * vowels.length)]}`;
    }
    words.add(word);
  }
  return [...words];
}

/**
 * Draws a word's rank with probability ∝ 1 / rank^1.07 (Zipf's law of English prose).
 * @param {() => number} rand
 * @param {number} n
 */
function zipf(rand, n) {
  const cumulative = new Float64Array(n);
  let sum = 0;
  for (let r = 0; r < n; r += 1) cumulative[r] = sum += 1 / (r + 1) ** 1.07;
  return () => {
    const x = rand() * sum;
    let low = 0;
    let high = n - 1;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (/** @type {number} */ (cumulative[mid]) < x) low = mid + 1;
      else high = mid;
    }
    return low;
  };
}

/**
 * A random unit vector (Gaussian components, so its direction is uniform).
 * @param {() => number} rand
 */
function unitVector(rand) {
  const v = new Float32Array(DIMENSIONS);
  let norm = 0;
  for (let d = 0; d < DIMENSIONS; d += 2) {
    const r = Math.sqrt(-2 * Math.log(1 - rand()));
    const theta = 2 * Math.PI * rand();
    const [x, y] = [r * Math.cos(theta), r * Math.sin(theta)];
    v[d] = x;
    v[d + 1] = y;
    norm += x * x + y * y;
  }
  norm = Math.sqrt(norm);
  for (let d = 0; d < DIMENSIONS; d += 1) v[d] = /** @type {number} */ (v[d]) / norm;
  return v;
}

/**
 * @typedef {{ chunks: number, words: number, queries: number, warmup: number, builds: number }} Size
 * @typedef {import('../src/documents/search').SearchQuery} Query
 */

/**
 * The synthetic store: chunks of sentences in ten files, and the words, for queries.
 * @param {Size} size
 */
function corpus(size) {
  const rand = random(47);
  const words = vocabulary(rand);
  const draw = zipf(rand, words.length);
  const sentence = () => {
    const length = 8 + Math.floor(rand() * 16);
    const out = Array.from({ length }, () => words[draw()]);
    const first = out[0] ?? '';
    out[0] = first.charAt(0).toUpperCase() + first.slice(1);
    return `${out.join(' ')}.`;
  };
  const chunks = [];
  for (let i = 0; i < size.chunks; i += 1) {
    const fileId = `file-${i % 10}`;
    const sentences = [];
    for (let n = 0; n < size.words; n += 16) sentences.push(sentence());
    const index = Math.floor(i / 10);
    const id = `vs_bench/${fileId}/${index}`;
    chunks.push({
      id,
      vector_store_id: 'vs_bench',
      file_id: fileId,
      index,
      text: sentences.join(' '),
      vector: unitVector(rand),
    });
  }
  const files = new Map(
    Array.from({ length: 10 }, (_, f) => [
      `file-${f}`,
      { filename: `doc-${f}.pdf`, attributes: { n: f } },
    ]),
  );
  // Queries: three to eight words as a person asks, now and then a rare one, and a vector.
  const queries = Array.from({ length: size.queries + size.warmup }, () => {
    const length = 3 + Math.floor(rand() * 6);
    const text = Array.from(
      { length },
      () => words[rand() < 0.2 ? 5_000 + Math.floor(rand() * 20_000) : draw()],
    ).join(' ');
    return { texts: [text], vectors: [unitVector(rand)] };
  });
  return { chunks, files, queries };
}

/** src/documents/search.ts, bundled with its dependencies as the service worker gets it. */
async function loadSearch() {
  await build({
    configFile: false,
    logLevel: 'warn',
    publicDir: false,
    build: {
      outDir: OUT_DIR,
      emptyOutDir: true,
      minify: false,
      lib: { entry: 'src/documents/search.ts', formats: ['es'], fileName: () => 'search.mjs' },
    },
  });
  return import(pathToFileURL(`${OUT_DIR}/search.mjs`).href);
}

/**
 * The value at quantile `q` of `xs` (nearest rank).
 * @param {number[]} xs
 * @param {number} q
 */
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
};

/**
 * Milliseconds of each call of `run(query)`, after `warmup` calls not counted.
 * @param {Query[]} queries
 * @param {number} warmup
 * @param {(query: Query) => unknown} run
 */
function timed(queries, warmup, run) {
  /** @type {number[]} */
  const out = [];
  queries.forEach((query, i) => {
    const started = performance.now();
    run(query);
    if (i >= warmup) out.push(performance.now() - started);
  });
  return out;
}

/**
 * The SearchIndex's build, its searches, and the two baselines, taking turns query by query.
 * @param {{ size: Size, log: (what: string) => void }} options
 */
async function measureSearch({ size, log }) {
  /** @type {typeof import('../src/documents/search').SearchIndex} */
  const SearchIndex = (await loadSearch()).SearchIndex;
  const MiniSearch = (await import('minisearch')).default;
  log(
    `documents: ${size.chunks} synthetic chunks of ~${size.words} words, ${DIMENSIONS}-wide vectors`,
  );
  const { chunks, files, queries } = corpus(size);
  const builds = [];
  let index = new SearchIndex();
  for (let b = 0; b < size.builds; b += 1) {
    const started = performance.now();
    index = new SearchIndex(chunks);
    builds.push(performance.now() - started);
  }
  // The baselines: a cosine scan of the same vectors (one matrix, as the index keeps them), and
  // MiniSearch alone, built as the index builds its own.
  const matrix = new Float32Array(chunks.length * DIMENSIONS);
  chunks.forEach((c, i) => matrix.set(c.vector, i * DIMENSIONS));
  const scores = new Float32Array(chunks.length);
  /** @param {Query} query */
  const scan = ({ vectors: [q = new Float32Array(DIMENSIONS)] }) => {
    for (let i = 0, at = 0; i < chunks.length; i += 1) {
      let dot = 0;
      for (let d = 0; d < DIMENSIONS; d += 1, at += 1) {
        dot += /** @type {number} */ (matrix[at]) * /** @type {number} */ (q[d]);
      }
      scores[i] = dot;
    }
  };
  const words = new MiniSearch({ fields: ['text'], storeFields: [] });
  words.addAll(chunks.map(({ id, text }) => ({ id, text })));
  /** @param {Query} query */
  const wordSearch = ({ texts: [text = ''] }) => words.search(text, { combineWith: 'OR' });
  const options = { maxResults: 10, files };
  log(`documents: ${size.queries} queries (after ${size.warmup} to warm up), each way in turn`);
  const ours = [];
  const scans = [];
  const minis = [];
  for (let i = 0; i < queries.length; i += 1) {
    const warm = i < size.warmup ? 1 : 0;
    const q = [/** @type {Query} */ (queries[i])];
    minis.push(...timed(q, warm, wordSearch));
    scans.push(...timed(q, warm, scan));
    ours.push(...timed(q, warm, (query) => index.search(query, options)));
  }
  const search = { p50: median(ours), p95: quantile(ours, 0.95) ?? NaN };
  return {
    documents_chunks: chunks.length,
    documents_runtime: `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown'}`,
    documents_index_build_ms: Math.round(median(builds)),
    documents_search_ms_p50: round(search.p50),
    documents_search_ms_p95: round(search.p95),
    documents_cosine_scan_ms_p50: round(median(scans)),
    documents_minisearch_ms_p50: round(median(minis)),
    documents_search_ratio_vs_parts: round(search.p50 / (median(scans) + median(minis))),
  };
}

/**
 * The documents rows' measurements, run in order, each returning rows of its own: the search in
 * Node, then indexing throughput (a 100-page PDF) and the search's share of a `file_search`
 * turn's first token in the app (bench/documents-app.mjs), their rows in DOCUMENTS_TARGETS.
 */
/** @type {Measurement[]} */
const MEASUREMENTS = [measureSearch, measureDocumentsApp];

/**
 * Adds a measurement (its rows' targets with `addDocumentsTargets`). `app` is the bench build
 * opened in Chromium (bench/run.mjs), where a measurement needs the app.
 * @typedef {{ page: import('playwright-core').Page, embedModel: string }} App
 * @typedef {(options: { size: Size & { quick?: boolean }, log: (what: string) => void, app?: App }) => Promise<Record<string, unknown>>} Measurement
 */

/** @param {Measurement} measure */
export const addDocumentsMeasurement = (measure) => void MEASUREMENTS.push(measure);

/** The rows, as run.mjs's TARGETS: [key, what, check or null, target]. */
/** @type {[string, string, ((v: number) => boolean) | null, string][]} */
export const DOCUMENTS_TARGETS = [
  [
    'documents_runtime',
    'documents: the search rows, measured in Node on this machine (no GPU)',
    null,
    '',
  ],
  ['documents_chunks', 'documents: chunks searched (synthetic, ~600 words, 384-wide)', null, ''],
  [
    'documents_index_build_ms',
    'documents: SearchIndex build over them, ms (Node, this machine)',
    null,
    '',
  ],
  [
    'documents_search_ms_p50',
    'documents: one hybrid search, 10 results, ms (p50; Node, this machine)',
    (v) => v <= 50,
    '≤ 50',
  ],
  ['documents_search_ms_p95', 'documents: the same, ms (p95)', (v) => v <= 100, '≤ 100'],
  [
    'documents_cosine_scan_ms_p50',
    'documents: baseline, the cosine scan alone, ms (p50)',
    null,
    '',
  ],
  ['documents_minisearch_ms_p50', 'documents: baseline, MiniSearch alone, ms (p50)', null, ''],
  [
    'documents_search_ratio_vs_parts',
    'documents: search p50 ÷ (scan p50 + MiniSearch p50): what ranking and fusion add',
    (v) => v <= 1.5,
    '≤ 1.5',
  ],
  ...DOCUMENTS_APP_TARGETS,
];

/**
 * Adds rows to the table (the targets of a measurement added with `addDocumentsMeasurement`).
 * @param {...[string, string, ((v: number) => boolean) | null, string]} rows
 */
export const addDocumentsTargets = (...rows) => void DOCUMENTS_TARGETS.push(...rows);

/**
 * Every documents row: `{ quick, log }` as run.mjs has them, and `app`, the bench build opened.
 * @param {{ quick: boolean, log: (what: string) => void, app?: App }} options
 */
export async function measureDocuments({ quick, log, app }) {
  const size = { ...(quick ? SIZES.quick : SIZES.full), quick };
  /** @type {Record<string, unknown>} */
  const results = {};
  for (const measure of MEASUREMENTS) Object.assign(results, await measure({ size, log, app }));
  return results;
}
