/**
 * Hearth in a site that is not Hearth's own: the plain fixture site (sites/make.mjs), made from
 * the packed `hearth-llm` tarball with `npm i` and `npx hearth init`, served under `/repo/` by a
 * static server that sets no special headers (as GitHub Pages). Its pages call `startHearth()`
 * from the copied loader and the stock `openai` SDK; no page of Hearth's is ever opened.
 */
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { expect, test, type BrowserContext, type Page } from '@playwright/test';
import { createLogger, createServer } from 'vite';
import { FIXTURE_SENTENCE } from '../../scripts/fixture-gguf.mjs';
import { dataUrl, solidPng } from '../test-images';
import { chromiumOnly } from './helpers';
import { FIXTURE_GGUF_URL, ModelServer } from './model-server';
import {
  builtAs,
  OLD_BUILD,
  PLAIN_PUBLIC,
  SITES_DIR,
  SITES_SCRATCH,
  VITE_DIST,
  VITE_OLD_DIST,
  VITE_SITE,
  VITE_WAITS_DIST,
  VITE_WAITS_OLD_DIST,
} from './sites/make.mjs';
import { StaticServer } from './sites/static-server.mjs';

/** A port of its own (E2E_SITE_PORT moves it, for runs side by side). */
const SITE_PORT = Number(process.env.E2E_SITE_PORT ?? 4193);
/** The same site with a `hearth-sw.js` of another build beside the new loader. */
const STALE_PUBLIC = join(SITES_SCRATCH, 'stale-public');
/**
 * The same site as its older build (every file of it says `0.0.1+old`), and `/up/`, a link that
 * points at the old site, then at the new one, as a deploy replaces one with the other.
 */
const OLD_PUBLIC = join(SITES_SCRATCH, 'old-public');
const UPGRADED = join(SITES_SCRATCH, 'upgraded');
/**
 * A site with a hand-written worker that precaches its pages and imports `hearth-sw.js`, before
 * and after the same upgrade (its own files unchanged: only Hearth's are new), and `/hand/`.
 */
const HAND_OLD = join(SITES_SCRATCH, 'hand-old');
const HAND_NEW = join(SITES_SCRATCH, 'hand-new');
const HAND_UPGRADED = join(SITES_SCRATCH, 'hand-upgraded');
/** The Vite site's `dist/`, first of its older build, then of the new (its `/repo/`). */
const VITE_UPGRADED = join(SITES_SCRATCH, 'vite-upgraded');
/** The same, for the Vite site whose worker waits. */
const VITE_WAITS_UPGRADED = join(SITES_SCRATCH, 'vite-waits-upgraded');

const site = new StaticServer(SITE_PORT, {
  '/repo/': PLAIN_PUBLIC,
  '/a/': PLAIN_PUBLIC,
  '/b/': PLAIN_PUBLIC,
  '/stale/': STALE_PUBLIC,
  '/up/': UPGRADED,
  '/hand/': HAND_UPGRADED,
  '/x/y/': PLAIN_PUBLIC,
});
/** The Vite site, with its own service worker, on the next port (another origin). */
const viteSite = new StaticServer(SITE_PORT + 1, { '/repo/': VITE_DIST });
/** The Vite site's project under `vite dev`, started by its test (past site-relay.spec.ts's port). */
const VITE_DEV_PORT = SITE_PORT + 7;
/** The plain site at the root of an origin of its own. */
const rootSite = new StaticServer(SITE_PORT + 2, { '/': PLAIN_PUBLIC });
/** The Vite site upgraded, on an origin of its own (past site-models.spec.ts's port). */
const viteUpgraded = new StaticServer(SITE_PORT + 6, { '/repo/': VITE_UPGRADED });
/** The Vite site whose worker waits, upgraded (past the vite dev test's port). */
const viteWaitsUpgraded = new StaticServer(SITE_PORT + 8, { '/repo/': VITE_WAITS_UPGRADED });
const models = new ModelServer();
const { version } = JSON.parse(
  readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
) as { version: string };
const BUILD_ID = new RegExp(`${version.replaceAll('.', '\\.')}\\+[0-9a-z]+`, 'g');

test.beforeAll(async () => {
  mkdirSync(SITES_SCRATCH, { recursive: true });
  rmSync(STALE_PUBLIC, { recursive: true, force: true });
  cpSync(PLAIN_PUBLIC, STALE_PUBLIC, { recursive: true });
  const sw = join(STALE_PUBLIC, 'hearth-sw.js');
  // The build id (`<version>+<time>`) is in the worker's first line and once in its code.
  const source = readFileSync(sw, 'utf8');
  expect(source.match(BUILD_ID)).toHaveLength(2);
  writeFileSync(sw, source.replaceAll(BUILD_ID, '0.0.1+old'));
  rmSync(OLD_PUBLIC, { recursive: true, force: true });
  cpSync(PLAIN_PUBLIC, OLD_PUBLIC, { recursive: true });
  // The older build whole: its id in every script of it, as `HEARTH_BUILD=0.0.1+old npm run
  // package` writes it (the same bytes, without a second package build).
  for (const file of scriptsOf(OLD_PUBLIC)) {
    writeFileSync(file, readFileSync(file, 'utf8').replaceAll(BUILD_ID, OLD_BUILD));
  }
  rmSync(UPGRADED, { force: true });
  symlinkSync(OLD_PUBLIC, UPGRADED);
  makeHandSite(HAND_OLD, OLD_PUBLIC);
  makeHandSite(HAND_NEW, PLAIN_PUBLIC);
  rmSync(HAND_UPGRADED, { force: true });
  symlinkSync(HAND_OLD, HAND_UPGRADED);
  rmSync(VITE_UPGRADED, { force: true });
  symlinkSync(VITE_OLD_DIST, VITE_UPGRADED);
  rmSync(VITE_WAITS_UPGRADED, { force: true });
  symlinkSync(VITE_WAITS_OLD_DIST, VITE_WAITS_UPGRADED);
  await Promise.all([
    site.start(),
    viteSite.start(),
    rootSite.start(),
    viteUpgraded.start(),
    viteWaitsUpgraded.start(),
    models.start(),
  ]);
});
test.afterAll(() =>
  Promise.all(
    [site, viteSite, rootSite, viteUpgraded, viteWaitsUpgraded, models].map((s) => s.stop()),
  ),
);
test.beforeEach(() => {
  viteSite.online = true;
});

/**
 * The hand-written site in `dir`, with Hearth's files of `publicDir` (linked): a page that
 * registers the site's own `sw.js` and starts Hearth with `registerWorker: false`, and a worker
 * that imports `hearth-sw.js` at its top, precaches the page and the SDK, answers them from its
 * cache, and waits to take over as a new version (no `skipWaiting`).
 */
function makeHandSite(dir: string, publicDir: string): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const name of ['hearth', 'hearth-sw.js', 'openai.js']) {
    symlinkSync(join(publicDir, name), join(dir, name));
  }
  writeFileSync(
    join(dir, 'sw.js'),
    `importScripts('hearth-sw.js');
const PAGES = 'hand-pages-v1';
self.addEventListener('install', (event) =>
  event.waitUntil(caches.open(PAGES).then((cache) => cache.addAll(['./', 'openai.js']))),
);
self.addEventListener('fetch', (event) => {
  const { request } = event;
  if (request.mode === 'navigate' || request.url.endsWith('/openai.js')) {
    event.respondWith(caches.match(request, { ignoreSearch: true }).then((hit) => hit ?? fetch(request)));
  }
});
`,
  );
  writeFileSync(
    join(dir, 'index.html'),
    `<!doctype html>
<html lang="en">
  <head><meta charset="utf-8" /><title>Hand-written</title><link rel="icon" href="data:," />
    <script src="openai.js"></script>
  </head>
  <body>
    <script type="module">
      import { startHearth } from './hearth/hearth.js';
      await navigator.serviceWorker.register('sw.js');
      window.hearthStarted = startHearth({ registerWorker: false }).then(
        (hearth) => (window.hearth = hearth),
        (error) => {
          window.hearthError = { name: error.name, code: error.code, message: error.message };
          throw error;
        },
      );
    </script>
  </body>
</html>
`,
  );
}

/** Hearth's scripts in a site's public folder: `hearth-sw.js` and the scripts under `hearth/`. */
function scriptsOf(publicDir: string): string[] {
  const under = readdirSync(join(publicDir, 'hearth'), { recursive: true, encoding: 'utf8' });
  return [
    join(publicDir, 'hearth-sw.js'),
    ...under.filter((name) => name.endsWith('.js')).map((name) => join(publicDir, 'hearth', name)),
  ];
}

/** What a page of the site keeps once started (sites/make.mjs). */
type Hosted = { hearth: { status: { role: string } } };

type Started = { baseURL: string; version: string; crossOriginIsolated: boolean };

/**
 * Opens `path` of the site and waits for its `startHearth()`, through the one reload it may make
 * (after a hard reload, or to become isolated).
 */
async function open(
  page: Page,
  path = '/repo/',
  server: { origin: string } = site,
): Promise<Started> {
  await page.goto(`${server.origin}${path}`);
  await page.waitForFunction(() => 'hearth' in globalThis || 'hearthError' in globalThis);
  return page.evaluate(() => {
    const g = globalThis as unknown as { hearth?: Started; hearthError?: { message: string } };
    if (!g.hearth) throw new Error(`startHearth failed: ${g.hearthError?.message}`);
    const hearth = g.hearth;
    return {
      baseURL: hearth.baseURL,
      version: hearth.version,
      crossOriginIsolated: hearth.crossOriginIsolated,
    };
  });
}

/** `/v1/hearth/status` of the install `base`, from `page`. */
const hostOf = (page: Page, base = '/repo/') =>
  page.evaluate(async (base) => {
    const response = await fetch(`${base}v1/hearth/status`, {
      headers: { authorization: 'Bearer k' },
    });
    return ((await response.json()) as { host: { id: string } | null }).host?.id ?? null;
  }, base);

/** Asks hearth/echo (or `model`) with the stock SDK, whole or streamed; returns the text. */
function askWithSdk(page: Page, content: string, stream: boolean, model = 'hearth/echo') {
  return page.evaluate(
    async ({ content, stream, model }) => {
      const g = globalThis as unknown as {
        hearth: { baseURL: string };
        OpenAI: new (options: object) => {
          chat: { completions: { create(body: object): Promise<unknown> } };
        };
      };
      const client = new g.OpenAI({
        baseURL: g.hearth.baseURL,
        apiKey: 'sk-site',
        dangerouslyAllowBrowser: true,
      });
      const messages = [{ role: 'user', content }];
      if (!stream) {
        const reply = (await client.chat.completions.create({ model, messages })) as {
          choices: { message: { content: string } }[];
        };
        return reply.choices[0]?.message.content;
      }
      const chunks = (await client.chat.completions.create({
        model,
        messages,
        stream: true,
      })) as AsyncIterable<{ choices: { delta: { content?: string } }[] }>;
      let text = '';
      for await (const chunk of chunks) text += chunk.choices[0]?.delta.content ?? '';
      return text;
    },
    { content, stream, model },
  );
}

test('the stock openai SDK gets hearth/echo’s reply exactly, whole and streamed, at /repo/v1/openai, from the build HEARTH_BUILD named', async ({
  page,
}) => {
  const hearth = await open(page);
  expect(hearth.baseURL).toBe(`${site.origin}/repo/v1/openai`);
  // The build id the package was made with (`HEARTH_BUILD=… npm run package`).
  expect(hearth.version).toBe(builtAs());
  expect(await askWithSdk(page, 'Hello from a plain site', false)).toBe('Hello from a plain site');
  expect(await askWithSdk(page, 'one two three four', true)).toBe('one two three four');
});

test('an image reaches hearth/echo through the site’s worker at /repo/, decoded and measured', async ({
  page,
}) => {
  await open(page);
  const png = solidPng(5, 3, [0, 128, 255]);
  const reply = await page.evaluate(async (url) => {
    const g = globalThis as unknown as { hearth: { baseURL: string } };
    const response = await fetch(`${g.hearth.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-site', 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'hearth/echo',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'and this?' },
              { type: 'image_url', image_url: { url } },
            ],
          },
        ],
      }),
    });
    return ((await response.json()) as { choices: { message: { content: string } }[] }).choices[0]
      ?.message.content;
  }, dataUrl(png));
  expect(reply).toBe(`and this?\n[image: image/png 5×3, ${png.byteLength} bytes]`);
});

test('one build answers at /, at /repo/ and at /x/y/', async ({ context }) => {
  for (const [server, base] of [
    [rootSite, '/'],
    [site, '/repo/'],
    [site, '/x/y/'],
  ] as const) {
    const page = await context.newPage();
    const hearth = await open(page, base, server);
    expect(hearth.baseURL).toBe(`${server.origin}${base}v1/openai`);
    expect(await askWithSdk(page, `at ${base}`, true)).toBe(`at ${base}`);
    await page.close();
  }
});

test('nothing is asked for outside /repo/ nor missing, nor of any other origin, and the site stays as it was: its pages not answered by the worker, not isolated, a cross-origin image without CORP loads', async ({
  page,
}) => {
  const from = site.requests.length;
  const origins = new Set<string>();
  page.on('request', (request) => origins.add(new URL(request.url()).origin));
  await open(page);
  await askWithSdk(page, 'hi', false);
  expect([...origins]).toEqual([site.origin]);
  // The page again, now that the worker controls it: still the network's, not the worker's.
  const response = await page.reload();
  expect(response?.fromServiceWorker()).toBe(false);
  await page.waitForFunction(() => 'hearth' in globalThis);
  const image = await page.evaluate(async (url) => {
    const img = new Image();
    img.src = url;
    return new Promise<boolean>((resolve) => {
      img.onload = () => resolve(true);
      img.onerror = () => resolve(false);
    });
  }, `http://localhost:${SITE_PORT}/repo/pixel.svg`);
  const requests = site.requests.slice(from);
  expect(requests.filter((r) => !r.path.startsWith('/repo/'))).toEqual([]);
  expect(requests.filter((r) => r.status !== 200 && r.status !== 304)).toEqual([]);
  expect(await page.evaluate(() => globalThis.crossOriginIsolated)).toBe(false);
  expect(image).toBe(true);
});

test('a GGUF added by URL is downloaded and answers the fixture’s sentence exactly through the SDK', async ({
  page,
}) => {
  await open(page);
  const id = await addFixture(page);
  expect(id.phase).toBe('done');
  expect(await askWithSdk(page, 'Tell me something.', false, id.id)).toBe(FIXTURE_SENTENCE);
});

/** Adds the fixture GGUF by its URL and downloads it, from a page of the site at `/repo/`. */
function addFixture(page: Page) {
  return page.evaluate(async (source) => {
    const headers = { authorization: 'Bearer k', 'content-type': 'application/json' };
    const added = await fetch('/repo/v1/hearth/models', {
      method: 'POST',
      headers,
      body: JSON.stringify({ source }),
    });
    const { id } = (await added.json()) as { id: string };
    const download = await fetch(`/repo/v1/hearth/models/${id}/download`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ stream: false }),
    });
    return { id, phase: ((await download.json()) as { phase?: string }).phase };
  }, FIXTURE_GGUF_URL);
}

test('two tabs share one host, and the second takes over within 3 s when the first closes', async ({
  context,
}) => {
  const first = await context.newPage();
  const second = await context.newPage();
  await open(first);
  await open(second);
  const host = await hostOf(second);
  expect(host).not.toBeNull();
  expect(await hostOf(first)).toBe(host);
  expect(await second.evaluate(() => (globalThis as unknown as Hosted).hearth.status.role)).toBe(
    'waiting',
  );
  await first.close();
  const closedAt = Date.now();
  // Taken over: the service worker accepted the second page's engine (its status says `host`).
  await second.waitForFunction(
    () => (globalThis as unknown as Hosted).hearth.status.role === 'host',
    undefined,
    { polling: 25, timeout: 10_000 },
  );
  const tookMs = Date.now() - closedAt;
  test.info().annotations.push({ type: 'takeover', description: `${tookMs} ms` });
  expect(tookMs).toBeLessThan(3000);
  expect(await hostOf(second)).not.toBe(host);
  expect(await askWithSdk(second, 'still here', false)).toBe('still here');
});

test('two installs on one origin (/a/ and /b/) elect two hosts', async ({ context }) => {
  const a = await context.newPage();
  const b = await context.newPage();
  expect((await open(a, '/a/')).baseURL).toBe(`${site.origin}/a/v1/openai`);
  expect((await open(b, '/b/')).baseURL).toBe(`${site.origin}/b/v1/openai`);
  const [hostA, hostB] = [await hostOf(a, '/a/'), await hostOf(b, '/b/')];
  expect(hostA).not.toBeNull();
  expect(hostB).not.toBeNull();
  expect(hostA).not.toBe(hostB);
  expect(await askWithSdk(a, 'from a', false)).toBe('from a');
  expect(await askWithSdk(b, 'from b', true)).toBe('from b');
});

test('after navigating to the page in another folder, the API still answers, and the downloaded GGUF loads again there (its reload timed)', async ({
  page,
}) => {
  await open(page);
  const fixture = await addFixture(page);
  expect(await askWithSdk(page, 'Tell me something.', false, fixture.id)).toBe(FIXTURE_SENTENCE);
  let started = Date.now();
  expect(await askWithSdk(page, 'Tell me something.', true, fixture.id)).toBe(FIXTURE_SENTENCE);
  const onOnePage = Date.now() - started;

  const hearth = await open(page, '/repo/docs/');
  expect(hearth.baseURL).toBe(`${site.origin}/repo/v1/openai`);
  expect(await askWithSdk(page, 'on the second page', true)).toBe('on the second page');
  // The engine lives in a page: the new page's host loads the model again, from the device.
  started = Date.now();
  expect(await askWithSdk(page, 'Tell me something.', true, fixture.id)).toBe(FIXTURE_SENTENCE);
  const afterNavigation = Date.now() - started;
  // Measured, not asserted (npm run bench -- --site measures it properly).
  test.info().annotations.push({
    type: 'model reload',
    description: `the fixture GGUF's reply took ${afterNavigation} ms after navigating, ${onOnePage} ms on one page`,
  });
});

test('isolate: true makes the page and the engine cross-origin isolated, and llama.cpp takes the threads the cores allow', async ({
  page,
}) => {
  const hearth = await open(page, '/repo/?isolate');
  expect(hearth.crossOriginIsolated).toBe(true);
  expect(await askWithSdk(page, 'isolated', false)).toBe('isolated');
  const { llama, cores } = await page.evaluate(async () => {
    const response = await fetch('/repo/v1/hearth/status', {
      headers: { authorization: 'Bearer k' },
    });
    const status = (await response.json()) as { llama: { isolated: boolean; threads: number } };
    return { llama: status.llama, cores: navigator.hardwareConcurrency };
  });
  expect(llama.isolated).toBe(true);
  // Half the cores, at most four (llamaThreads in llama-runtime.ts, which Node cannot import):
  // more than one from four cores up.
  expect(llama.threads).toBe(Math.max(1, Math.min(Math.floor(cores / 2), 4)));
  if (cores >= 4) expect(llama.threads).toBeGreaterThan(1);
});

test('a stale hearth-sw.js beside a new loader gives one clear error naming both files, their builds and npx hearth init', async ({
  page,
}) => {
  await page.goto(`${site.origin}/stale/`);
  const error = await page.evaluate(async () => {
    const g = globalThis as unknown as { hearthStarted: Promise<unknown>; hearthError: unknown };
    await g.hearthStarted.catch(() => undefined);
    return g.hearthError as { name: string; code: string; message: string };
  });
  expect(error).toMatchObject({ name: 'HearthError', code: 'version_mismatch' });
  expect(error.message).toContain('/stale/hearth-sw.js on the server is build 0.0.1+old');
  expect(error.message).toMatch(
    new RegExp(`/stale/hearth/hearth\\.js is build ${BUILD_ID.source}`),
  );
  expect(error.message).toContain('npx hearth init');
});

/** The build `worker` of the registration for `scope` runs (`hearth/version`), or null. */
function buildOf(page: Page, worker: 'active' | 'waiting', scope: string) {
  return page.evaluate(
    async ({ which, scope }) => {
      const registration = await navigator.serviceWorker.getRegistration(scope);
      const target = registration?.[which];
      if (!target) return null;
      return new Promise<string>((resolve) => {
        const { port1, port2 } = new MessageChannel();
        port1.onmessage = (event: MessageEvent<{ build: string }>) => resolve(event.data.build);
        target.postMessage({ type: 'hearth/version', port: port2 }, [port2]);
      });
    },
    { which: worker, scope },
  );
}

/** A site to upgrade: where it is served, and the deploy that makes it the new build. */
interface Upgrade {
  server: StaticServer;
  base: string;
  deploy: () => void;
  /**
   * The site's own page code reloads its open tabs when its new worker takes control
   * (vite-plugin-pwa's `registerSW` does): a tab left open then runs the new build.
   */
  reloadsTabs?: boolean;
}

/** What one page load runs: its build, the builds of the Hearth files it loaded, a reply. */
interface Visited {
  version: string;
  builds: string[];
  reply: string;
}

/**
 * Asks the page which build it runs, which builds of Hearth's files it loaded (`@<build>/` in
 * their addresses) and hearth/echo's reply to `text` through the SDK, all of one page load: a
 * tab the site reloads meanwhile is asked again once it has started.
 */
async function visited(page: Page, base: string, text: string): Promise<Visited> {
  for (let tries = 1; ; tries += 1) {
    try {
      await page.waitForFunction(() => 'hearth' in globalThis);
      return await page.evaluate(
        async ({ base, text }) => {
          const g = globalThis as unknown as {
            hearth: { baseURL: string; version: string };
            OpenAI: new (options: object) => {
              chat: { completions: { create(body: object): Promise<unknown> } };
            };
          };
          const names = performance.getEntriesByType('resource').map((entry) => entry.name);
          const files = names.filter((name) =>
            new URL(name).pathname.startsWith(`${base}hearth/@`),
          );
          const builds = [
            ...new Set(
              files.map((name) => decodeURIComponent(name.split('/hearth/@')[1]!.split('/')[0]!)),
            ),
          ];
          const client = new g.OpenAI({
            baseURL: g.hearth.baseURL,
            apiKey: 'sk-site',
            dangerouslyAllowBrowser: true,
          });
          const reply = (await client.chat.completions.create({
            model: 'hearth/echo',
            messages: [{ role: 'user', content: text }],
          })) as { choices: { message: { content: string } }[] };
          return { version: g.hearth.version, builds, reply: reply.choices[0]!.message.content };
        },
        { base, text },
      );
    } catch (error) {
      if (tries === 3 || !String(error).includes('Execution context was destroyed')) throw error;
    }
  }
}

/**
 * A returning visitor across a deploy of a newer build: a first visit on the old build, a tab
 * left open across the deploy, a visit while it is open, then one after the tabs closed. Every
 * page load runs one build whole (the Hearth files it loads are all of its build), nothing errs,
 * the tab left open keeps answering, and once the new worker has taken over the next visit is on
 * the new build.
 */
async function returningVisitor(
  context: BrowserContext,
  { server, base, deploy, reloadsTabs = false }: Upgrade,
) {
  const errors: string[] = [];
  const build = new RegExp(`^${BUILD_ID.source}$`);
  const visit = async () => {
    const page = await context.newPage();
    page.on('pageerror', (error) => errors.push(error.message));
    await open(page, base, server);
    return page;
  };
  /**
   * The page runs one build whole, `expected` where given, and answers. (A first visit loads
   * Hearth's files from the network before a worker controls it, by their plain names.)
   */
  const check = async (page: Page, text: string, expected?: string | RegExp, first = false) => {
    const seen = await visited(page, base, text);
    expect(seen.builds).toEqual(first ? [] : [seen.version]);
    expect(seen.reply).toBe(text);
    if (expected !== undefined) expect(seen.version).toMatch(expected);
    return seen.version;
  };
  const before = await visit();
  await check(before, 'before the upgrade', OLD_BUILD, true);
  await before.close();
  const leftOpen = await visit();

  // The deploy: the same address now serves the new build (cached for ten minutes, with ETags).
  deploy();
  await check(leftOpen, 'still here', OLD_BUILD);

  // The next visit, the old tab still open: the old build whole (or, where the site reloads its
  // tabs when its new worker takes over, the new one), while the new worker installs.
  const during = await visit();
  await check(during, 'during the upgrade', reloadsTabs ? undefined : OLD_BUILD);
  // The new worker installed: waiting, or active already where the site's worker skips waiting.
  // Watched from a page of the origin outside the site's scope, which nothing reloads.
  const watching = await context.newPage();
  await watching.goto(`${server.origin}/elsewhere`);
  const newer = async () =>
    (await buildOf(watching, 'waiting', base)) ?? (await buildOf(watching, 'active', base));
  await expect.poll(newer, { timeout: 30_000 }).toMatch(build);
  await watching.close();
  // (A tab the site reloads runs the new build once reloaded: the old one until then.)
  await check(leftOpen, 'still answering', reloadsTabs ? undefined : OLD_BUILD);
  await leftOpen.close();
  await during.close();
  // The browser activates a waiting worker once the last tab of the old one has gone (Firefox a
  // moment after).
  const outside = await context.newPage();
  await outside.goto(`${server.origin}/elsewhere`);
  await expect.poll(() => buildOf(outside, 'active', base), { timeout: 30_000 }).toMatch(build);
  await outside.close();

  // The next visit is the new build whole.
  const after = await visit();
  const version = await check(after, 'after the upgrade', build);
  expect(await buildOf(after, 'active', base)).toBe(version);
  expect(errors).toEqual([]);
}

test.describe('a returning visitor after an upgrade runs one build whole at every visit, never errs, keeps a tab left open answering, and is on the new build once its worker takes over', () => {
  test('with Hearth’s own worker', async ({ context }) => {
    await returningVisitor(context, {
      server: site,
      base: '/up/',
      deploy: () => {
        rmSync(UPGRADED, { force: true });
        symlinkSync(PLAIN_PUBLIC, UPGRADED);
      },
    });
  });

  test('with a hand-written worker that precaches the pages, imports hearth-sw.js through the HTTP cache and waits', async ({
    context,
  }) => {
    await returningVisitor(context, {
      server: site,
      base: '/hand/',
      deploy: () => {
        rmSync(HAND_UPGRADED, { force: true });
        symlinkSync(HAND_NEW, HAND_UPGRADED);
      },
    });
  });

  test('with vite-plugin-pwa’s generateSW worker, which skips waiting and claims the open tabs, and its registerSW, which reloads them', async ({
    context,
  }) => {
    await returningVisitor(context, {
      server: viteUpgraded,
      base: '/repo/',
      deploy: () => {
        rmSync(VITE_UPGRADED, { force: true });
        symlinkSync(VITE_DIST, VITE_UPGRADED);
      },
      reloadsTabs: true,
    });
  });

  test('with vite-plugin-pwa’s generateSW worker as it comes, which waits for the tabs to close', async ({
    context,
  }) => {
    await returningVisitor(context, {
      server: viteWaitsUpgraded,
      base: '/repo/',
      deploy: () => {
        rmSync(VITE_WAITS_UPGRADED, { force: true });
        symlinkSync(VITE_WAITS_DIST, VITE_WAITS_UPGRADED);
      },
    });
  });
});

test('the packed tarball holds exactly the files of package/files.txt', ({ browserName }) => {
  chromiumOnly(browserName, 'the tarball is the same whichever browser runs');
  const tarball = readFileSync(join(SITES_DIR, '.made'), 'utf8').trim();
  const files = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)
    .map((path) => path.replace(/^package\//, ''))
    .sort();
  const expected = readFileSync(new URL('../../package/files.txt', import.meta.url), 'utf8')
    .split('\n')
    .filter((line) => line && !line.startsWith('#'))
    .sort();
  expect(files).toEqual(expected);
});

test.describe('a Vite site whose own vite-plugin-pwa worker imports hearth-sw.js', () => {
  test('the SDK gets hearth/echo exactly from the site’s own worker, which keeps its pages, and the site is not isolated', async ({
    page,
  }) => {
    const hearth = await open(page, '/repo/', viteSite);
    expect(hearth.baseURL).toBe(`${viteSite.origin}/repo/v1/openai`);
    expect(await askWithSdk(page, 'Hello from Vite', false)).toBe('Hello from Vite');
    expect(await askWithSdk(page, 'streamed from Vite', true)).toBe('streamed from Vite');
    const worker = await page.evaluate(async () => ({
      controller: navigator.serviceWorker.controller?.scriptURL,
      precached: (await caches.keys()).some((name) => name.startsWith('workbox-precache')),
      isolated: globalThis.crossOriginIsolated,
    }));
    expect(worker).toEqual({
      controller: `${viteSite.origin}/repo/sw.js`,
      precached: true,
      isolated: false,
    });
    // The plugin writes Hearth's files after vite-plugin-pwa globbed the build: none precached.
    const precachedUrls = await page.evaluate(async () => {
      const urls: string[] = [];
      for (const name of await caches.keys()) {
        if (!name.startsWith('workbox-precache')) continue;
        for (const request of await (await caches.open(name)).keys()) urls.push(request.url);
      }
      return urls;
    });
    expect(precachedUrls).toContainEqual(expect.stringContaining('/repo/index.html'));
    expect(precachedUrls.filter((url) => /\/repo\/hearth(\/|-sw\.js)/.test(url))).toEqual([]);
    expect(viteSite.requests.filter((r) => r.status !== 200 && r.status !== 304)).toEqual([]);
  });

  test('offline after first use: the site’s pages, the API, the engine’s code and a downloaded GGUF all answer with the network off', async ({
    page,
  }) => {
    await open(page, '/repo/', viteSite);
    const fixture = await addFixture(page);
    expect(fixture.phase).toBe('done');
    expect(await askWithSdk(page, 'Tell me something.', false, fixture.id)).toBe(FIXTURE_SENTENCE);

    viteSite.online = false;
    const ggufRequests = models.ggufRequests.length;
    await open(page, '/repo/', viteSite);
    expect(await askWithSdk(page, 'offline echo', true)).toBe('offline echo');
    expect(await askWithSdk(page, 'Tell me something.', false, fixture.id)).toBe(FIXTURE_SENTENCE);
    expect(models.ggufRequests.length).toBe(ggufRequests);
    await page.goto(`${viteSite.origin}/repo/about.html`);
    await expect(page).toHaveTitle('About (loaded)');
  });

  test('in vite dev, the plugin serves Hearth’s files under /repo/ and vite-plugin-pwa’s dev worker imports them: the SDK gets hearth/echo’s reply', async ({
    page,
  }) => {
    // The site's project as it is (its vite.config.js with hearth() and VitePWA), in a folder
    // of this run's: vite dev writes its dep cache and vite-plugin-pwa its dev-dist/ there.
    const project = join(SITES_SCRATCH, 'vite-dev');
    rmSync(project, { recursive: true, force: true });
    mkdirSync(project, { recursive: true });
    for (const name of ['package.json', 'vite.config.js', 'index.html', 'about.html', 'src']) {
      cpSync(join(VITE_SITE, name), join(project, name), { recursive: true });
    }
    symlinkSync(join(VITE_SITE, 'node_modules'), join(project, 'node_modules'));
    // What Vite and the plugins say: the hearth plugin's hint about vite-plugin-pwa's dev worker
    // must not come (it is on, and the plugin can tell), nor any error (a worker Workbox refused).
    const logger = createLogger('warn');
    const said: string[] = [];
    logger.warn = logger.error = (message) => void said.push(message);
    const server = await createServer({
      root: project,
      configFile: join(project, 'vite.config.js'),
      cacheDir: join(project, '.vite'),
      customLogger: logger,
      server: { host: '127.0.0.1', port: VITE_DEV_PORT, strictPort: true },
    });
    await server.listen();
    try {
      const origin = `http://127.0.0.1:${VITE_DEV_PORT}`;
      const failed: string[] = [];
      page.on('response', (response) => {
        if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`);
      });
      const hearth = await open(page, '/repo/', { origin });
      expect(hearth.baseURL).toBe(`${origin}/repo/v1/openai`);
      expect(await askWithSdk(page, 'Hello from vite dev', false)).toBe('Hello from vite dev');
      expect(await askWithSdk(page, 'streamed in dev', true)).toBe('streamed in dev');
      const served = await page.evaluate(async () => ({
        controller: navigator.serviceWorker.controller?.scriptURL,
        wasm: (await fetch('/repo/hearth/wllama.wasm', { method: 'HEAD' })).headers.get(
          'content-type',
        ),
        compat: (await fetch('/repo/hearth/wllama-compat/3.13.0/wllama.js')).status,
      }));
      expect(served).toEqual({
        controller: `${origin}/repo/dev-sw.js?dev-sw`,
        wasm: 'application/wasm',
        compat: 404, // hearth({ compat: false })
      });
      expect(failed.filter((line) => !line.includes('/wllama-compat/'))).toEqual([]);
      expect(said).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
