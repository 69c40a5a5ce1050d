/**
 * `hearth.models` in a site that is not Hearth's own (the plain fixture site of sites/make.mjs,
 * made from the packed tarball, served under `/repo/` by a static server as GitHub Pages): the
 * docs' "download with a progress bar, then stream, with Stop" example run as written, on the
 * bench-size fixture GGUF (~50 MB, two 32 MiB parts in the package's build), and the rest of the
 * model API end to end: add twice, prepare with its progress, abort then resume, list, delete,
 * `HearthError` by `instanceof`; and a page that would register Hearth's worker over the site's.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { FIXTURE_SENTENCE } from '../../scripts/fixture-gguf.mjs';
import { BENCH_GGUF_PATH, BENCH_GGUF_URL, ModelServer } from './model-server';
import { PLAIN_PUBLIC, PLAIN_SITE, SITES_SCRATCH } from './sites/make.mjs';
import { StaticServer } from './sites/static-server.mjs';

/** A port of its own, past site.spec's three (E2E_SITE_PORT moves them, for runs side by side). */
const SITE_PORT = Number(process.env.E2E_SITE_PORT ?? 4193) + 5;
/**
 * Where the tests hold the download: past half the ~50 MB file, and a part's first byte whether
 * the package was built with 32 MiB parts (src/models/gguf-parts.ts) or the e2e build's 256 KiB.
 */
const HOLD_AT = 32 * 1024 * 1024;
const EXAMPLE_DIR = join(SITES_SCRATCH, 'models-example');
const CONFLICT_DIR = join(SITES_SCRATCH, 'models-conflict');

const site = new StaticServer(SITE_PORT, {
  // First: the server takes the first prefix that matches.
  '/repo/example/': EXAMPLE_DIR,
  '/repo/': PLAIN_PUBLIC,
  '/conflict/': CONFLICT_DIR,
});
const models = new ModelServer();

/**
 * The docs' example (docs/site.md, the block after `<!-- example: download-then-stream -->`),
 * with what a build and the page would give it: Vite's `import.meta.env.BASE_URL` replaced by the
 * base, as Vite replaces it; `SOURCE` the fixture's URL; and one line added so that the test can
 * reach the `hearth` it made.
 */
function docsExample(): string {
  const docs = readFileSync(new URL('../../docs/site.md', import.meta.url), 'utf8');
  const block = /<!-- example: download-then-stream -->\s*```js\n([\s\S]*?)```/.exec(docs)?.[1];
  if (!block) throw new Error('docs/site.md has no download-then-stream example');
  const source = /^const SOURCE = '[^']*';/m;
  expect(block).toMatch(source);
  expect(block).toContain('import.meta.env.BASE_URL');
  return `${block
    .replace(source, `const SOURCE = '${BENCH_GGUF_URL}';`)
    .replaceAll('import.meta.env.BASE_URL', "'/repo/'")}\nwindow.example = { hearth };\n`;
}

test.beforeAll(async () => {
  rmSync(EXAMPLE_DIR, { recursive: true, force: true });
  mkdirSync(EXAMPLE_DIR, { recursive: true });
  writeFileSync(join(EXAMPLE_DIR, 'example.js'), docsExample());
  // The `openai` package as a module: the plain site serves the SDK's browser bundle, a global.
  writeFileSync(join(EXAMPLE_DIR, 'openai.js'), 'export default globalThis.OpenAI;\n');
  writeFileSync(
    join(EXAMPLE_DIR, 'index.html'),
    `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" /><title>Summarise</title><link rel="icon" href="data:," />
    <script type="importmap">
      { "imports": { "hearth-llm": "/repo/hearth/hearth.js", "openai": "/repo/example/openai.js" } }
    </script>
    <script src="/repo/openai.js"></script>
    <script type="module" src="/repo/example/example.js"></script>
  </head>
  <body>
    <button id="go">Summarise</button> <button id="stop">Stop</button>
    <progress id="bar" max="1" value="0"></progress> <span id="label"></span>
    <p id="output"></p>
  </body>
</html>
`,
  );
  rmSync(CONFLICT_DIR, { recursive: true, force: true });
  mkdirSync(CONFLICT_DIR, { recursive: true });
  writeFileSync(join(CONFLICT_DIR, 'own-sw.js'), "self.addEventListener('fetch', () => {});\n");
  writeFileSync(
    join(CONFLICT_DIR, 'index.html'),
    `<!doctype html>
<html lang="en">
  <head><meta charset="utf-8" /><title>A PWA</title><link rel="icon" href="data:," /></head>
  <body>
    <script type="module">
      import { startHearth, HearthError } from '/repo/hearth/hearth.js';
      // The site's own worker, and Hearth started without registerWorker: false.
      await navigator.serviceWorker.register('/conflict/own-sw.js', { scope: '/conflict/' });
      await navigator.serviceWorker.ready;
      window.outcome = startHearth({ base: '/conflict/' }).then(
        () => ({ started: true }),
        (e) => ({ instance: e instanceof HearthError, name: e.name, code: e.code, message: e.message }),
      );
    </script>
  </body>
</html>
`,
  );
  await Promise.all([site.start(), models.start()]);
});
test.afterAll(() => Promise.all([site.stop(), models.stop()]));
test.beforeEach(() => models.reset());

/** What the example's page exposes, and what the tests call on it. */
type Example = {
  example: { hearth: import('../../src/site/types').Hearth };
};

/** Opens the example's page and waits until its `startHearth()` has resolved. */
async function openExample(page: Page): Promise<void> {
  await page.goto(`${site.origin}/repo/example/`);
  await page.waitForFunction(() => 'example' in globalThis, undefined, { timeout: 30_000 });
}

/** How many downloads the host has under way (`/v1/hearth/status`). */
function downloadsUnderWay(page: Page): Promise<number> {
  return page.evaluate(async () => {
    const response = await fetch('/repo/v1/hearth/status', {
      headers: { authorization: 'Bearer k' },
    });
    return ((await response.json()) as { downloads: unknown[] }).downloads.length;
  });
}

/** The ranges of the bench GGUF asked of the model server, in order. */
const ranges = () => models.rangesOf(BENCH_GGUF_PATH);

test('the docs’ example downloads with a progress bar, stops at Stop, resumes on the next click and streams the model’s answer', async ({
  page,
}) => {
  await openExample(page);
  models.troubleRange(BENCH_GGUF_PATH, HOLD_AT, 'hold');
  await page.click('#go');
  await expect.poll(() => models.holding, { timeout: 30_000 }).toBe(1);
  // The first part is in: the bar shows it, short of the whole.
  const bar = () => page.locator('#bar').evaluate((bar: HTMLProgressElement) => bar.value);
  await expect.poll(bar).toBeGreaterThan(0.5);
  expect(await bar()).toBeLessThan(1);
  await expect(page.locator('#label')).toContainText('Downloading');
  await page.click('#stop');
  // Stopped in the host, not only in the page: no download is under way any more.
  await expect.poll(() => downloadsUnderWay(page)).toBe(0);
  models.release();

  await page.click('#go');
  await expect(page.locator('#output')).toHaveText(FIXTURE_SENTENCE, { timeout: 60_000 });
  await expect(page.locator('#bar')).toHaveJSProperty('value', 1);
  // Resumed: from the start of the file, only the header's read when the model was first added
  // and the first part, once.
  expect(ranges().filter((range) => range?.startsWith('bytes=0-'))).toHaveLength(2);
});

test('the model API end to end: add twice, prepare with progress, abort then resume, list, delete, and HearthError by instanceof', async ({
  page,
}) => {
  await openExample(page);
  // The second part waits, so that the abort comes with the first part stored.
  models.troubleRange(BENCH_GGUF_PATH, HOLD_AT, 'hold');
  const started = await page.evaluate(async (source) => {
    const { hearth } = (globalThis as unknown as Example).example;
    const first = await hearth.models.add({ source });
    const second = await hearth.models.add({ source });
    const aborted = new AbortController();
    const g = globalThis as unknown as { abort: () => Promise<string> };
    const outcome = hearth.models.prepare(first.id, { signal: aborted.signal }).then(
      () => 'resolved',
      (e: Error) => e.name,
    );
    g.abort = () => (aborted.abort(), outcome);
    return { first, secondId: second.id };
  }, BENCH_GGUF_URL);
  // Aborted while the second part is held: the first is stored.
  await expect.poll(() => models.holding, { timeout: 30_000 }).toBe(1);
  const aborted = await page.evaluate(async (id) => {
    const { hearth } = (globalThis as unknown as Example).example;
    const abortName = await (globalThis as unknown as { abort: () => Promise<string> }).abort();
    const afterAbort = (await hearth.models.list()).find((m) => m.id === id)!;
    return { abortName, afterAbort: afterAbort.downloaded };
  }, started.first.id);
  // The held request ends once the host has let the download go (a new one would join it).
  await expect.poll(() => downloadsUnderWay(page)).toBe(0);
  models.release();
  const outcome = await page.evaluate(async (id) => {
    const { hearth } = (globalThis as unknown as Example).example;
    const { HearthError } = (await import('/repo/hearth/hearth.js' as string)) as {
      HearthError: abstract new (...args: never[]) => Error;
    };
    const first = { id };
    const reports: { phase: string; fraction: number | null; fromCache: boolean }[] = [];
    const prepared = await hearth.models.prepare(first.id, {
      onProgress: ({ phase, fraction, fromCache }) => reports.push({ phase, fraction, fromCache }),
    });
    const status = (await (
      await fetch('/repo/v1/hearth/status', { headers: { authorization: 'Bearer k' } })
    ).json()) as { loaded_model: string | null };
    const cached: { fraction: number | null; fromCache: boolean }[] = [];
    await hearth.models.prepare(first.id, { onProgress: (p) => cached.push(p) });
    const downloaded = await hearth.models.list({ downloaded: true });
    const embeddings = await hearth.models.list({ task: 'embedding' });
    const device = await hearth.device();
    const alreadyAborted = await hearth.models
      .prepare(first.id, { signal: AbortSignal.abort() })
      .then(
        () => 'resolved',
        (e: Error) => e.name,
      );
    const unknown = await hearth.models.prepare('nobody/none:Q4_0').catch((e: unknown) => e);
    await hearth.models.delete(first.id);
    const afterDelete = (await hearth.models.list()).find((m) => m.id === first.id) ?? null;
    const u = unknown as { code?: string; status?: number; name?: string };
    return {
      reports,
      prepared,
      loaded: status.loaded_model,
      cached,
      downloaded: downloaded.map((m) => m.id),
      embeddings: embeddings.map((m) => m.embedding),
      device,
      alreadyAborted,
      unknown: {
        instance: unknown instanceof HearthError,
        code: u.code,
        status: u.status,
        name: u.name,
      },
      afterDelete,
    };
  }, started.first.id);

  expect(started.secondId).toBe(started.first.id);
  expect(started.first).toMatchObject({ engine: 'llama.cpp', embedding: false, vision: false });
  expect(aborted).toEqual({ abortName: 'AbortError', afterAbort: false });

  const { reports } = outcome;
  expect(reports[0]).toMatchObject({ phase: 'download', fromCache: false });
  expect(reports.at(-1)).toEqual({ phase: 'load', fraction: 1, fromCache: false });
  const phases = reports.map((r) => r.phase);
  expect(phases.indexOf('load')).toBeGreaterThan(phases.lastIndexOf('download'));
  const fractions = reports.filter((r) => r.phase === 'download').map((r) => r.fraction ?? 0);
  expect(fractions).toEqual([...fractions].sort((a, b) => a - b));
  expect(fractions.at(-1)).toBe(1);
  expect(outcome.prepared).toMatchObject({ id: started.first.id, downloaded: true });
  expect(['good', 'slow', 'no']).toContain(outcome.prepared.fit);
  expect(outcome.loaded).toBe(started.first.id);

  expect(outcome.cached[0]).toMatchObject({ fraction: 1, fromCache: true });
  expect(outcome.cached.at(-1)).toMatchObject({ fraction: 1, fromCache: true });
  expect(outcome.downloaded).toContain(started.first.id);
  expect(outcome.embeddings.every(Boolean)).toBe(true);
  expect(outcome.device.llama?.threads).toBeGreaterThanOrEqual(1);
  expect(outcome.device.cpu?.threads).toBe(outcome.device.llama?.threads);
  expect(outcome.device.cpu?.bytes_per_second).toBeGreaterThan(0);
  expect(outcome.device.storage.usage_bytes).toBeGreaterThan(0);
  expect(outcome.alreadyAborted).toBe('AbortError');
  expect(outcome.unknown).toEqual({
    instance: true,
    code: 'model_not_found',
    status: 404,
    name: 'HearthError',
  });
  expect(outcome.afterDelete).toBeNull();
  // From the start of the file: the header's read when the model was added (once: the second add
  // asked nothing), then the first part, once: the resumed download did not fetch it again.
  expect(ranges().filter((range) => range?.startsWith('bytes=0-'))).toHaveLength(2);
});

test('a page that would register Hearth’s worker over the site’s own gets a HearthError that says what to do, and the site’s worker stays', async ({
  page,
}) => {
  await page.goto(`${site.origin}/conflict/`);
  await page.waitForFunction(() => 'outcome' in globalThis);
  const outcome = await page.evaluate(
    () => (globalThis as unknown as { outcome: Promise<Record<string, unknown>> }).outcome,
  );
  expect(outcome).toMatchObject({ instance: true, name: 'HearthError', code: 'worker_conflict' });
  expect(outcome.message).toContain('registerWorker: false');
  expect(outcome.message).toContain("importScripts('hearth-sw.js')");
  const script = await page.evaluate(
    async () => (await navigator.serviceWorker.getRegistration('/conflict/'))?.active?.scriptURL,
  );
  expect(script).toBe(`${site.origin}/conflict/own-sw.js`);
});

/**
 * What a strict TypeScript site writes against the package's declarations: every public call and
 * type, and (`@ts-expect-error`) what the types must refuse, so that an `any` would fail it too.
 */
const CONSUMER = `import {
  HearthError,
  startHearth,
  type HearthChatParams,
  type HearthDevice,
  type HearthMessageExtensions,
  type HearthModel,
  type HearthProgress,
} from 'hearth-llm';

export async function feature(bar: { value: number }): Promise<string | null> {
  const hearth = await startHearth({ base: '/repo/', registerWorker: false, apiKey: 'k' });
  const models: HearthModel[] = await hearth.models.list({ task: 'chat', fits: true });
  const pick = (await hearth.models.recommend({ maxDownloadMB: 500, vision: false })) ?? models[0];
  if (!pick) return null;
  const added = await hearth.models.add({ source: 'hf:a/b:Q8_0', mmproj: false });
  const onProgress = (p: HearthProgress) => {
    bar.value = p.fraction ?? 0;
    const phase: 'download' | 'load' = p.phase;
    return [phase, p.loaded, p.total, p.fromCache, p.text];
  };
  const ready = await hearth.models.prepare(added.id, { onProgress, signal: AbortSignal.timeout(1) });
  await hearth.models.delete(ready.id);
  const device: HearthDevice = await hearth.device();
  const fit: 'good' | 'slow' | 'no' = ready.fit;
  // @ts-expect-error a fit is one of three words
  const wrong: 'great' = ready.fit;
  // @ts-expect-error the engine is one of four
  const engine: 'vllm' = ready.engine;
  const params: HearthChatParams = { enable_thinking: false, ignore_eos: true, repetition_penalty: 1.1 };
  // @ts-expect-error enable_thinking is a boolean
  const badParams: HearthChatParams = { enable_thinking: 'no' };
  const reply: HearthMessageExtensions = { reasoning_content: 'thought' };
  try {
    await hearth.stop();
  } catch (err) {
    if (err instanceof HearthError) {
      const status: number | null = err.status;
      const param: string | null = err.param;
      return [err.code, status, param].join();
    }
  }
  return [device.webgpu.available, device.llama?.threads, fit, wrong, engine, params, badParams, reply]
    .join()
    .concat(hearth.baseURL, hearth.version, hearth.status.role);
}
`;

test('the package’s declarations compile in a strict consumer with nothing else installed, and refuse what they should', async ({
  browserName,
}) => {
  test.skip(browserName !== 'chromium', 'no browser involved: once is enough');
  const dir = mkdtempSync(join(tmpdir(), 'hearth-consumer-'));
  try {
    mkdirSync(join(dir, 'node_modules'));
    symlinkSync(
      join(PLAIN_SITE, 'node_modules', 'hearth-llm'),
      join(dir, 'node_modules', 'hearth-llm'),
    );
    writeFileSync(
      join(dir, 'package.json'),
      '{ "name": "consumer", "private": true, "type": "module" }\n',
    );
    writeFileSync(join(dir, 'feature.ts'), CONSUMER);
    const compilerOptions = {
      strict: true,
      skipLibCheck: false,
      noEmit: true,
      target: 'es2023',
      lib: ['es2023', 'dom', 'dom.iterable'],
      module: 'esnext',
      moduleResolution: 'bundler',
      types: [],
    };
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({ compilerOptions, files: ['feature.ts'] }),
    );
    // TypeScript 5.9, the consumer's: the repository's own (typescript-7 only checks Hearth's code).
    const tsc = new URL('../../node_modules/typescript/bin/tsc', import.meta.url).pathname;
    const version = execFileSync(process.execPath, [tsc, '--version'], { encoding: 'utf8' });
    expect(version).toMatch(/^Version 5\.9\./);
    let output = '';
    try {
      execFileSync(process.execPath, [tsc, '-p', dir], { cwd: dir, encoding: 'utf8' });
    } catch (error) {
      output = String((error as { stdout?: string }).stdout ?? error);
    }
    expect(output).toBe('');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
