// The site rows of `npm run bench -- --site`: Hearth as a site that is not Hearth's own uses it.
// The plain fixture site of the e2e tests (tests/e2e/sites/make.mjs: the packed `hearth-llm`,
// `npm i` and `npx hearth init`, two pages that call `startHearth()` and load the stock `openai`
// SDK), made in a folder of the bench's own and served under `/repo/` by the tests' static server
// (no special headers, `max-age=600`, as GitHub Pages). Measured in headless Chromium:
// - a first visit (a fresh profile) and a return visit (the same profile, its service worker
//   stopped, as it is a while after its last page closed): the time from `startHearth()` to the
//   first complete `hearth/echo` reply, which the page asks for itself as soon as Hearth has
//   started (its `?bench` query), and the bytes the site served for the visit (response bodies,
//   the service worker's fetches included, until the site has been quiet for five seconds);
// - a GGUF's time to first token on the page that has the model loaded, against the first
//   request after navigating to the site's other page: the engine lives in a page, so the new
//   page's engine host loads the model again (from storage, not the network). The fixture GGUF
//   (0.36 MB) and the bench GGUF (~50 MB), to see what the weights add; each in a fresh profile,
//   served by the same static server (`/models/`, as a site may host its own model);
// - `hearth.models.prepare()` → the first token streamed through the stock `openai` SDK, the
//   fixture GGUF and the bench GGUF, on a first visit (a fresh profile, nothing downloaded) and a
//   return visit (a new page in the same profile after the first closed: the model on the device,
//   loaded from its cache), against `hearth/echo`'s first streamed token on the same page;
// - and, counted from the files (no browser): the lines of code of the docs' own "download with
//   a progress bar, then stream, with Stop" example (docs/site.md, `download-then-stream`)
//   against the same feature on WebLLM (bench/site-feature-webllm.js).
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';
import { BENCH_OPTIONS, FIXTURE_SENTENCE, fixtureGguf } from '../scripts/fixture-gguf.mjs';
import { makeSites, sitesIn } from '../tests/e2e/sites/make.mjs';
import { StaticServer } from '../tests/e2e/sites/static-server.mjs';
import { median, round } from './stats.mjs';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
/** The bench's sites and package, apart from the e2e tests' (ignored as `dist-*`). */
const SITES_DIR = join(ROOT, 'dist-bench-site');
const SITE_PORT = Number(process.env.BENCH_SITE_PORT ?? 4196);
const KEY = 'Bearer site';
const KIB = 1024;
/**
 * The site is quiet once it has served nothing for this long: the visit is over. Chromium checks
 * the service worker for an update a second or two after a navigation, after the reply, later on
 * a busy machine: a shorter wait would leave that fetch of `hearth-sw.js` to the next visit.
 */
const QUIET_MS = 5000;
/**
 * How long a page waits, once Hearth has started, before it asks for a token: as a visitor does,
 * and so that the work a model load leaves behind on two cores (compiling the engine's
 * WebAssembly further) does not fall on the baseline's request.
 */
const SETTLE_MS = 1000;
/** What the page asks `hearth/echo` (the `?bench` query of the fixture page). */
const ECHO_CONTENT = 'first reply';

/**
 * @typedef {object} SiteSizes
 * @property {number} visits first visits, each in a fresh profile
 * @property {number} returns return visits after each first visit, in its profile
 * @property {number} ttftRuns pairs of first tokens for each GGUF: on the page that has the model
 *   loaded, then after navigating to the other page
 * @property {number} prepareRuns first and return visits, each pair in a fresh profile, timed from
 *   `hearth.models.prepare()` to the first token, for each GGUF
 */

/**
 * The keys of the table, what each is and its target (none: these rows describe, they do not
 * judge), in run.mjs's form.
 * @type {[string, string, null, string][]}
 */
export const SITE_TARGETS = [
  ['site_first_visit_ms', 'first visit: startHearth() → first echo reply, ms', null, ''],
  ['site_first_visit_kib', 'first visit: bytes the site served, KiB', null, ''],
  ['site_first_visit_hearth_kib', '… of them hearth-sw.js and hearth/, KiB', null, ''],
  ['site_return_visit_ms', 'return visit: startHearth() → first echo reply, ms', null, ''],
  ['site_return_visit_kib', 'return visit: bytes the site served, KiB', null, ''],
  ['site_ttft_same_page_ms', 'fixture GGUF, first token, model loaded on this page, ms', null, ''],
  ['site_ttft_after_nav_ms', 'fixture GGUF, first token after navigating (reload), ms', null, ''],
  ['site_ttft_nav_ratio', 'fixture GGUF, first token after navigating ÷ same page', null, ''],
  ['site_ttft_nav_added_ms', 'fixture GGUF, what navigating adds (paired), ms', null, ''],
  ['site_bench_ttft_same_page_ms', 'bench GGUF (~50 MB), first token, same page, ms', null, ''],
  ['site_bench_ttft_after_nav_ms', 'bench GGUF, first token after navigating, ms', null, ''],
  ['site_bench_ttft_nav_ratio', 'bench GGUF, first token after navigating ÷ same page', null, ''],
  ['site_bench_ttft_nav_added_ms', 'bench GGUF, what navigating adds (paired), ms', null, ''],
  ['site_feature_lines', "docs' download-then-stream example, lines of code", null, ''],
  ['site_feature_webllm_lines', 'the same feature on WebLLM, lines of code', null, ''],
  ['site_feature_lines_ratio', "docs' example ÷ WebLLM's, lines", null, ''],
  ['site_prepare_echo_ms', 'first visit: hearth/echo, first streamed token, ms', null, ''],
  ['site_prepare_first_ms', 'fixture GGUF, first visit: prepare() → first token, ms', null, ''],
  ['site_prepare_return_ms', 'fixture GGUF, return visit: prepare() → first token, ms', null, ''],
  ['site_bench_prepare_first_ms', 'bench GGUF, first visit: prepare() → first token, ms', null, ''],
  [
    'site_bench_prepare_return_ms',
    'bench GGUF, return visit: prepare() → first token, ms',
    null,
    '',
  ],
];

/**
 * Makes the browser bundle of the `openai` SDK the site serves as the e2e global setup makes its
 * own (tests/e2e/fixtures/openai-global.ts as one script that sets `OpenAI`), in the bench's
 * folder, and returns its path.
 * @returns {Promise<string>}
 */
async function openaiBundle() {
  const outDir = join(SITES_DIR, 'openai');
  const entry = join(ROOT, 'tests/e2e/fixtures/openai-global.ts');
  await build({
    configFile: false,
    logLevel: 'warn',
    publicDir: false,
    build: {
      outDir,
      emptyOutDir: true,
      minify: false,
      lib: { entry, formats: ['iife'], name: 'OpenAIBundle', fileName: () => 'openai.js' },
    },
  });
  return join(outDir, 'openai.js');
}

/**
 * Resolves once `site` has served nothing for `QUIET_MS` (at most 20 s).
 * @param {StaticServer} site
 */
async function quiet(site) {
  const until = Date.now() + 20_000;
  let seen = site.requests.length;
  let since = Date.now();
  while (Date.now() - since < QUIET_MS && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    if (site.requests.length !== seen) [seen, since] = [site.requests.length, Date.now()];
  }
}

/**
 * What the fixture page records under `?bench` (performance.now(), ms since its navigation).
 * @typedef {object} Marks
 * @property {number} t0 just before `startHearth()` was called
 * @property {number} startedAt when it resolved
 * @property {number} repliedAt when the SDK had the whole echo reply
 * @property {string} content the reply
 */

/**
 * @typedef {object} Visit
 * @property {number} reply_ms from `startHearth()` to the first echo reply
 * @property {number} start_ms from `startHearth()` to its resolving
 * @property {number} navigation_ms from the navigation's start to the first echo reply
 * @property {number} bytes response bodies the site served for the visit
 * @property {number} hearth_bytes those of `hearth-sw.js` and `hearth/`
 * @property {string[]} requests `<path> <bytes>` for each request of the visit
 */

/**
 * Opens the site's first page in `page` with `?bench` and reads its marks and what it cost.
 * @param {import('playwright-core').Page} page
 * @param {StaticServer} site
 * @returns {Promise<Visit>}
 */
async function visit(page, site) {
  const from = site.requests.length;
  await page.goto(`${site.origin}/repo/?bench`);
  const marks = await page.evaluate(
    () =>
      /** @type {{ hearthBench: Promise<Marks> }} */ (/** @type {unknown} */ (globalThis))
        .hearthBench,
  );
  if (marks.content !== ECHO_CONTENT) throw new Error(`echo answered ${marks.content}`);
  await quiet(site);
  const served = site.requests.slice(from);
  const ofHearth = served.filter(
    (r) => r.path === '/repo/hearth-sw.js' || r.path.startsWith('/repo/hearth/'),
  );
  /** @param {typeof served} rs */
  const sum = (rs) => rs.reduce((total, r) => total + r.bytes, 0);
  return {
    reply_ms: marks.repliedAt - marks.t0,
    start_ms: marks.startedAt - marks.t0,
    navigation_ms: marks.repliedAt,
    bytes: sum(served),
    hearth_bytes: sum(ofHearth),
    requests: served.map((r) => `${r.path} ${r.bytes}`),
  };
}

/**
 * First visits, each in a fresh profile, and return visits in each of those profiles.
 * @param {import('playwright-core').Browser} browser
 * @param {StaticServer} site
 * @param {SiteSizes} sizes
 */
async function measureVisits(browser, site, sizes) {
  /** @type {Visit[]} */
  const firsts = [];
  /** @type {Visit[]} */
  const returns = [];
  for (let v = 0; v < sizes.visits; v += 1) {
    const context = await browser.newContext();
    try {
      const first = await context.newPage();
      firsts.push(await visit(first, site));
      await first.close();
      for (let r = 0; r < sizes.returns; r += 1) {
        const page = await context.newPage();
        // The browser stops the worker a while after its last page closed; a return visit (a day
        // later) starts it again.
        const cdp = await context.newCDPSession(page);
        await cdp.send('ServiceWorker.enable');
        await cdp.send('ServiceWorker.stopAllWorkers');
        await cdp.detach();
        returns.push(await visit(page, site));
        await page.close();
      }
    } finally {
      await context.close();
    }
  }
  return { firsts, returns };
}

/**
 * Adds the GGUF at `source` by its URL and downloads it, from a page of the site.
 * @param {import('playwright-core').Page} page
 * @param {string} source
 * @returns {Promise<string>} its id
 */
async function addModel(page, source) {
  const { id, phase } = await page.evaluate(
    async ({ source, KEY }) => {
      await /** @type {{ hearthStarted: Promise<unknown> }} */ (/** @type {unknown} */ (globalThis))
        .hearthStarted;
      const headers = { authorization: KEY, 'content-type': 'application/json' };
      const added = await fetch('/repo/v1/hearth/models', {
        method: 'POST',
        headers,
        body: JSON.stringify({ source }),
      });
      const { id } = /** @type {{ id: string }} */ (await added.json());
      const download = await fetch(`/repo/v1/hearth/models/${id}/download`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ stream: false }),
      });
      return { id, phase: /** @type {{ phase?: string }} */ (await download.json()).phase };
    },
    { source, KEY },
  );
  if (phase !== 'done') throw new Error(`the download of ${source} ended ${phase}`);
  return id;
}

/**
 * Once Hearth has started on `page` and a moment after (`SETTLE_MS`), streams a reply of `model`
 * with `fetch` and returns the time from the request to its first content token, having checked
 * the whole reply.
 * @param {import('playwright-core').Page} page
 * @param {string} model
 * @returns {Promise<number>}
 */
async function firstToken(page, model) {
  const { ms, text } = await page.evaluate(
    async ({ model, KEY, SETTLE_MS }) => {
      await /** @type {{ hearthStarted: Promise<unknown> }} */ (/** @type {unknown} */ (globalThis))
        .hearthStarted;
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      const started = performance.now();
      const response = await fetch('/repo/v1/openai/chat/completions', {
        method: 'POST',
        headers: { authorization: KEY, 'content-type': 'application/json' },
        body: JSON.stringify({
          model,
          messages: [{ role: 'user', content: 'Tell me something.' }],
          stream: true,
        }),
      });
      if (!response.body) throw new Error(`status ${response.status}, no body`);
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let ms = NaN;
      let text = '';
      let tail = '';
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        const events = (tail + value).split('\n\n');
        tail = events.pop() ?? '';
        for (const event of events) {
          if (!event.startsWith('data: {')) continue;
          const chunk = JSON.parse(event.slice(6));
          const piece = chunk.choices?.[0]?.delta?.content ?? '';
          if (piece && Number.isNaN(ms)) ms = performance.now() - started;
          text += piece;
        }
      }
      return { ms, text };
    },
    { model, KEY, SETTLE_MS },
  );
  if (text !== FIXTURE_SENTENCE) throw new Error(`${model} answered ${JSON.stringify(text)}`);
  return ms;
}

/**
 * Pairs of first tokens of the GGUF `/models/<file>`: on the page that has it loaded, then on the
 * site's other page, navigated to as a link does (a new page load, so a new engine host loads the
 * model). In a fresh profile of its own, so that no series finds what another left (the files,
 * the engine's WebAssembly as the browser keeps it compiled), whichever runs first.
 * @param {import('playwright-core').Browser} browser
 * @param {string} origin the site's
 * @param {string} file
 * @param {number} runs
 */
async function measureNavigation(browser, origin, file, runs) {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(`${origin}/repo/`);
    const model = await addModel(page, `${origin}/models/${file}`);
    await firstToken(page, model); // loads it
    /** @type {number[]} */
    const same = [];
    /** @type {number[]} */
    const afterNav = [];
    for (let r = 0; r < runs; r += 1) {
      same.push(await firstToken(page, model));
      const next = new URL(page.url()).pathname === '/repo/' ? '/repo/docs/' : '/repo/';
      await page.evaluate((url) => location.assign(url), next);
      await page.waitForURL(`${origin}${next}`);
      afterNav.push(await firstToken(page, model));
    }
    return { same, afterNav };
  } finally {
    await context.close();
  }
}

/**
 * The non-blank lines of JavaScript `code` that are not comments (`// …` lines and `/* … *\/`
 * blocks; a line of code with a comment after it counts).
 * @param {string} code
 */
export function linesOfCode(code) {
  return code
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('//')).length;
}

/**
 * The lines of code of the docs' `download-then-stream` example (docs/site.md, read now, as
 * tests/e2e/site-models.spec.ts reads it) and of the same feature on WebLLM
 * (bench/site-feature-webllm.js).
 */
export function featureLines() {
  const docs = readFileSync(join(ROOT, 'docs/site.md'), 'utf8');
  const block = /<!-- example: download-then-stream -->\s*```js\n([\s\S]*?)```/.exec(docs)?.[1];
  if (!block) throw new Error('docs/site.md has no download-then-stream example');
  const webllm = readFileSync(join(ROOT, 'bench/site-feature-webllm.js'), 'utf8');
  return { hearth: linesOfCode(block), webllm: linesOfCode(webllm) };
}

/**
 * What a page of the site measures of one GGUF (see `prepareVisit`).
 * @typedef {object} PrepareVisit
 * @property {number} echo_ms `hearth/echo`: the SDK's streamed request → its first token
 * @property {number} prepare_ms `hearth.models.prepare()` → the first token of the model's
 *   streamed answer through the SDK
 * @property {number} prepared_ms … of it, `prepare()` alone
 * @property {string[]} phases the progress reports' phases, in order, repeats left out
 *   (`download`, `load`; `(cache)` when `fromCache`)
 */

/**
 * On `page` (the site's first page, just opened): once Hearth has started and a moment after
 * (`SETTLE_MS`), `hearth/echo`'s first streamed token through the SDK (the baseline), then the
 * GGUF at `source` added (`hearth.models.add`, not timed) and the time from
 * `hearth.models.prepare(id)` to the first token of its streamed answer through the SDK, as the
 * docs' example does it; the whole answer checked.
 * @param {import('playwright-core').Page} page
 * @param {string} source
 * @returns {Promise<PrepareVisit>}
 */
async function prepareVisit(page, source) {
  const { text, ...visit } = await page.evaluate(
    async ({ source, SETTLE_MS }) => {
      const hearth = /** @type {import('../src/site/types').Hearth} */ (
        await /** @type {{ hearthStarted: Promise<unknown> }} */ (
          /** @type {unknown} */ (globalThis)
        ).hearthStarted
      );
      const { OpenAI } = /** @type {{ OpenAI: typeof import('openai').default }} */ (
        /** @type {unknown} */ (globalThis)
      );
      const openai = new OpenAI({
        baseURL: hearth.baseURL,
        apiKey: 'sk-site',
        dangerouslyAllowBrowser: true,
      });
      const messages = [{ role: /** @type {const} */ ('user'), content: 'Tell me something.' }];
      /**
       * The time from `from` to the first content token of `model`'s streamed answer, and the
       * answer.
       * @param {string} model
       * @param {number} from
       */
      const stream = async (model, from) => {
        const chunks = await openai.chat.completions.create({ model, messages, stream: true });
        let ms = NaN;
        let text = '';
        for await (const chunk of chunks) {
          const piece = chunk.choices[0]?.delta.content ?? '';
          if (piece && Number.isNaN(ms)) ms = performance.now() - from;
          text += piece;
        }
        return { ms, text };
      };
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      const echo = await stream('hearth/echo', performance.now());
      const { id } = await hearth.models.add({ source });
      /** @type {string[]} */
      const phases = [];
      const started = performance.now();
      await hearth.models.prepare(id, {
        onProgress: (p) => {
          const phase = `${p.phase}${p.fromCache ? ' (cache)' : ''}`;
          if (phases.at(-1) !== phase) phases.push(phase);
        },
      });
      const prepared_ms = performance.now() - started;
      const answer = await stream(id, started);
      return {
        echo_ms: echo.ms,
        prepare_ms: answer.ms,
        prepared_ms,
        phases,
        text: answer.text,
      };
    },
    { source, SETTLE_MS },
  );
  if (text !== FIXTURE_SENTENCE) throw new Error(`${source} answered ${JSON.stringify(text)}`);
  return visit;
}

/**
 * `runs` pairs of visits for the GGUF `/models/<file>`, each pair in a fresh profile: a first
 * visit (nothing downloaded), then a return visit in a new page after the first closed, its
 * service worker stopped as for the return visits above: the model on the device, loaded into a
 * new page's engine from its cache.
 * @param {import('playwright-core').Browser} browser
 * @param {string} origin the site's
 * @param {string} file
 * @param {number} runs
 */
async function measurePrepare(browser, origin, file, runs) {
  /** @type {PrepareVisit[]} */
  const firsts = [];
  /** @type {PrepareVisit[]} */
  const returns = [];
  for (let r = 0; r < runs; r += 1) {
    const context = await browser.newContext();
    try {
      const first = await context.newPage();
      await first.goto(`${origin}/repo/`);
      firsts.push(await prepareVisit(first, `${origin}/models/${file}`));
      await first.close();
      const page = await context.newPage();
      const cdp = await context.newCDPSession(page);
      await cdp.send('ServiceWorker.enable');
      await cdp.send('ServiceWorker.stopAllWorkers');
      await cdp.detach();
      await page.goto(`${origin}/repo/`);
      const again = await prepareVisit(page, `${origin}/models/${file}`);
      if (again.phases.includes('download')) throw new Error(`${file} was downloaded again`);
      returns.push(again);
    } finally {
      await context.close();
    }
  }
  return { firsts, returns };
}

/**
 * The tables of the feature's lines of code and of `prepare()`'s first token, as text.
 * @param {Record<string, any>} r the results of `measureSite`
 */
export function siteTables(r) {
  /** @param {(string | number)[][]} rows */
  const table = (rows) => {
    const widths = rows[0]?.map((_, i) => Math.max(...rows.map((row) => String(row[i]).length)));
    return rows
      .map((row) =>
        row.map((cell, i) => String(cell)[i ? 'padStart' : 'padEnd'](widths?.[i] ?? 0)).join('  '),
      )
      .join('\n');
  };
  const lines = table([
    ['the feature: download with a progress bar, then stream, with Stop', 'lines', '÷ WebLLM'],
    [
      "Hearth: docs/site.md's download-then-stream example",
      r.site_feature_lines,
      r.site_feature_lines_ratio,
    ],
    ['WebLLM: bench/site-feature-webllm.js', r.site_feature_webllm_lines, 1],
  ]);
  const echo = r.site_prepare_echo_ms;
  /** @param {string} what @param {number} ms @param {number} first the first visit's ms */
  const row = (what, ms, first) => [what, ms, round(ms / echo, 1), round(ms / first)];
  const ttft = table([
    ['first token, ms (median)', 'ms', '÷ echo', '÷ first visit'],
    ['hearth/echo (baseline: no model)', echo, 1, ''],
    row('fixture GGUF, first visit: prepare() →', r.site_prepare_first_ms, r.site_prepare_first_ms),
    row(
      'fixture GGUF, return visit: prepare() →',
      r.site_prepare_return_ms,
      r.site_prepare_first_ms,
    ),
    row(
      'bench GGUF, first visit: prepare() →',
      r.site_bench_prepare_first_ms,
      r.site_bench_prepare_first_ms,
    ),
    row(
      'bench GGUF, return visit: prepare() →',
      r.site_bench_prepare_return_ms,
      r.site_bench_prepare_first_ms,
    ),
  ]);
  return `${lines}\n\n${ttft}`;
}

/**
 * The site rows. Makes the site (again, when the package's sources changed since).
 * @param {object} options
 * @param {import('playwright-core').Browser} options.browser
 * @param {SiteSizes} options.sizes
 * @param {(what: string) => void} options.log
 */
export async function measureSite({ browser, sizes, log }) {
  log('making the plain site from the packed tarball (dist-bench-site/)');
  const bundle = await openaiBundle();
  makeSites({ dir: SITES_DIR, vite: false, openaiBundle: bundle });
  const { plainPublic } = sitesIn(SITES_DIR);
  // A site made before the SDK's last update would serve the old one.
  cpSync(bundle, join(plainPublic, 'openai.js'));
  const fixture = fixtureGguf();
  const bench = fixtureGguf(BENCH_OPTIONS);
  const models = join(SITES_DIR, 'models');
  mkdirSync(models, { recursive: true });
  writeFileSync(join(models, 'fixture.gguf'), fixture);
  writeFileSync(join(models, 'bench.gguf'), bench);
  const site = new StaticServer(SITE_PORT, { '/repo/': plainPublic, '/models/': models });
  await site.start();
  const loadBefore = loadavg()[0] ?? NaN;
  try {
    log(`${sizes.visits} first visits, each followed by ${sizes.returns} return visits`);
    const { firsts, returns } = await measureVisits(browser, site, sizes);

    log(`the fixture GGUF (${round(fixture.byteLength / KIB / KIB)} MiB): ${sizes.ttftRuns} pairs`);
    const small = await measureNavigation(browser, site.origin, 'fixture.gguf', sizes.ttftRuns);
    log(`the bench GGUF (${round(bench.byteLength / KIB / KIB)} MiB): ${sizes.ttftRuns} pairs`);
    const big = await measureNavigation(browser, site.origin, 'bench.gguf', sizes.ttftRuns);
    log(`prepare() → first token: ${sizes.prepareRuns} first and return visits for each GGUF`);
    const prepSmall = await measurePrepare(browser, site.origin, 'fixture.gguf', sizes.prepareRuns);
    const prepBig = await measurePrepare(browser, site.origin, 'bench.gguf', sizes.prepareRuns);
    const loc = featureLines();

    /** @param {Visit[]} visits @param {'reply_ms' | 'start_ms' | 'navigation_ms'} key */
    const ms = (visits, key) => round(median(visits.map((v) => v[key])), 1);
    /** @param {Visit[]} visits @param {'bytes' | 'hearth_bytes'} key */
    const kib = (visits, key) => round(median(visits.map((v) => v[key])) / KIB, 1);
    /** @param {number[]} xs */
    const p50 = (xs) => round(median(xs), 1);
    // Each navigation is paired with the request on the page just before it: the median of the
    // differences is steadier than the difference of the medians on a busy machine.
    /** @param {{ same: number[], afterNav: number[] }} pairs */
    const added = ({ same, afterNav }) => p50(afterNav.map((t, i) => t - (same[i] ?? NaN)));
    /** @param {PrepareVisit[]} visits @param {'echo_ms' | 'prepare_ms' | 'prepared_ms'} key */
    const prep = (visits, key) => p50(visits.map((v) => v[key]));
    return {
      site_first_visit_ms: ms(firsts, 'reply_ms'),
      site_first_visit_kib: kib(firsts, 'bytes'),
      site_first_visit_hearth_kib: kib(firsts, 'hearth_bytes'),
      site_return_visit_ms: ms(returns, 'reply_ms'),
      site_return_visit_kib: kib(returns, 'bytes'),
      site_ttft_same_page_ms: p50(small.same),
      site_ttft_after_nav_ms: p50(small.afterNav),
      site_ttft_nav_ratio: round(median(small.afterNav) / median(small.same)),
      site_ttft_nav_added_ms: added(small),
      site_bench_ttft_same_page_ms: p50(big.same),
      site_bench_ttft_after_nav_ms: p50(big.afterNav),
      site_bench_ttft_nav_ratio: round(median(big.afterNav) / median(big.same)),
      site_bench_ttft_nav_added_ms: added(big),
      site_feature_lines: loc.hearth,
      site_feature_webllm_lines: loc.webllm,
      site_feature_lines_ratio: round(loc.hearth / loc.webllm),
      site_prepare_echo_ms: prep([...prepSmall.firsts, ...prepBig.firsts], 'echo_ms'),
      site_prepare_first_ms: prep(prepSmall.firsts, 'prepare_ms'),
      site_prepare_return_ms: prep(prepSmall.returns, 'prepare_ms'),
      site_bench_prepare_first_ms: prep(prepBig.firsts, 'prepare_ms'),
      site_bench_prepare_return_ms: prep(prepBig.returns, 'prepare_ms'),
      // Not in the table: how the visits split, and every sample.
      site_first_visit_start_ms: ms(firsts, 'start_ms'),
      site_first_visit_from_navigation_ms: ms(firsts, 'navigation_ms'),
      site_return_visit_start_ms: ms(returns, 'start_ms'),
      site_return_visit_from_navigation_ms: ms(returns, 'navigation_ms'),
      site_return_visit_hearth_kib: kib(returns, 'hearth_bytes'),
      // The machine's load (1-minute average) as the run began and ended: work of others' on it
      // slows every row.
      site_load_average: [round(loadBefore), round(loadavg()[0] ?? NaN)],
      site_samples: {
        first_visit_ms: firsts.map((v) => round(v.reply_ms, 1)),
        first_visit_bytes: firsts.map((v) => v.bytes),
        return_visit_ms: returns.map((v) => round(v.reply_ms, 1)),
        return_visit_bytes: returns.map((v) => v.bytes),
        first_visit_requests: firsts[0]?.requests ?? [],
        return_visit_requests: returns[0]?.requests ?? [],
        fixture_gguf_bytes: fixture.byteLength,
        fixture_ttft_same_page_ms: small.same.map((x) => round(x, 1)),
        fixture_ttft_after_nav_ms: small.afterNav.map((x) => round(x, 1)),
        bench_gguf_bytes: bench.byteLength,
        bench_ttft_same_page_ms: big.same.map((x) => round(x, 1)),
        bench_ttft_after_nav_ms: big.afterNav.map((x) => round(x, 1)),
        ...Object.fromEntries(
          Object.entries({ fixture: prepSmall, bench: prepBig }).flatMap(
            ([name, { firsts, returns }]) => [
              [`${name}_prepare_first_ms`, firsts.map((v) => round(v.prepare_ms, 1))],
              [`${name}_prepare_first_prepared_ms`, firsts.map((v) => round(v.prepared_ms, 1))],
              [`${name}_prepare_return_ms`, returns.map((v) => round(v.prepare_ms, 1))],
              [`${name}_prepare_return_prepared_ms`, returns.map((v) => round(v.prepared_ms, 1))],
              [`${name}_prepare_echo_ms`, firsts.map((v) => round(v.echo_ms, 1))],
              [`${name}_prepare_first_phases`, firsts[0]?.phases ?? []],
              [`${name}_prepare_return_phases`, returns[0]?.phases ?? []],
            ],
          ),
        ),
      },
    };
  } finally {
    await site.stop();
  }
}
