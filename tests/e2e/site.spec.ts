/**
 * Hearth in a site that is not Hearth's own: the plain fixture site (sites/make.mjs), made from
 * the packed `hearth-llm` tarball with `npm i` and `npx hearth init`, served under `/repo/` by a
 * static server that sets no special headers (as GitHub Pages). Its pages call `startHearth()`
 * from the copied loader and the stock `openai` SDK; no page of Hearth's is ever opened.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { createLogger, createServer } from 'vite';
import { FIXTURE_SENTENCE } from '../../scripts/fixture-gguf.mjs';
import { dataUrl, solidPng } from '../test-images';
import { chromiumOnly } from './helpers';
import { FIXTURE_GGUF_URL, ModelServer } from './model-server';
import { makePdf } from '../test-pdfs';
import {
  builtAs,
  PLAIN_PUBLIC,
  SITES_DIR,
  SITES_SCRATCH,
  VITE_DIST,
  VITE_SITE,
} from './sites/make.mjs';
import { askWithSdk, openSite, type Started } from './sites/site-page';
import { StaticServer } from './sites/static-server.mjs';

/** A port of its own (E2E_SITE_PORT moves it, for runs side by side). */
const SITE_PORT = Number(process.env.E2E_SITE_PORT ?? 4193);

const site = new StaticServer(SITE_PORT, {
  '/repo/': PLAIN_PUBLIC,
  '/a/': PLAIN_PUBLIC,
  '/b/': PLAIN_PUBLIC,
  '/x/y/': PLAIN_PUBLIC,
});
/** The Vite site, with its own service worker, on the next port (another origin). */
const viteSite = new StaticServer(SITE_PORT + 1, { '/repo/': VITE_DIST });
/** The Vite site's project under `vite dev`, started by its test (past site-relay.spec.ts's port). */
const VITE_DEV_PORT = SITE_PORT + 7;
/** The plain site at the root of an origin of its own. */
const rootSite = new StaticServer(SITE_PORT + 2, { '/': PLAIN_PUBLIC });
const models = new ModelServer();
/** The model server's embedding fixture, added by URL as a site's code adds a model. */
const FIXTURE_EMBEDDING_URL = FIXTURE_GGUF_URL.replace(
  '/gguf/fixture.gguf',
  '/gguf/llama-fixture-embedding.gguf',
);
/** A two-page PDF, a rare word on its second page. */
const SITE_PDF = makePdf([
  ['Page one.', 'Nothing rare here.'],
  ['Page two.', 'A zanzibarite.'],
]);

test.beforeAll(() =>
  Promise.all([site.start(), viteSite.start(), rootSite.start(), models.start()]),
);
test.afterAll(() => Promise.all([site, viteSite, rootSite, models].map((s) => s.stop())));
test.beforeEach(() => {
  viteSite.online = true;
});

/** What a page of the site keeps once started (sites/make.mjs). */
type Hosted = { hearth: { status: { role: string } } };

/**
 * Opens `path` of the site (`server`, the plain site by default) and waits for its `startHearth()`.
 */
const open = (page: Page, path = '/repo/', server: { origin: string } = site): Promise<Started> =>
  openSite(page, server.origin, path);

/** `/v1/hearth/status` of the install `base`, from `page`. */
const hostOf = (page: Page, base = '/repo/') =>
  page.evaluate(async (base) => {
    const response = await fetch(`${base}v1/hearth/status`, {
      headers: { authorization: 'Bearer k' },
    });
    return ((await response.json()) as { host: { id: string } | null }).host?.id ?? null;
  }, base);

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

/** The files of `hearth/` the package ships (package/files.txt), as paths under `hearth/`. */
const HEARTH_FILES = readFileSync(new URL('../../package/files.txt', import.meta.url), 'utf8')
  .split('\n')
  .filter((line) => line.startsWith('files/hearth/'))
  .map((line) => line.slice('files/hearth/'.length));

/** Every entry of the page's origin's caches, as `<cache> <url>`. */
const cacheEntries = (page: Page) =>
  page.evaluate(async () => {
    const entries: string[] = [];
    for (const name of await caches.keys()) {
      for (const request of await (await caches.open(name)).keys()) {
        entries.push(`${name} ${request.url}`);
      }
    }
    return entries.sort();
  });

test('Hearth’s file cache holds only the build’s files, by exact path without the query: navigations, queries and encoded traversals under hearth/ store nothing, and the files still load', async ({
  page,
  context,
}) => {
  await open(page);
  expect(await askWithSdk(page, 'before', false)).toBe('before');
  const before = await cacheEntries(page);
  // Navigations, as a popup another site re-points would make: to the loader and a large file
  // with queries, to a page outside hearth/ through an encoded slash (the host decodes it), to
  // the llama.cpp WebAssembly (a download) and to a listed file by its plain name.
  const tab = await context.newPage();
  const navigations = [
    'hearth/hearth.js?n=1',
    'hearth/lib.js?n=0',
    'hearth/lib.js',
    'hearth/..%2findex.html',
    'hearth/wllama-compat/3.13.0/wllama.wasm?x=i',
    'hearth/wllama.wasm?x=1',
  ];
  const answeredByWorker: string[] = [];
  for (const path of navigations) {
    const response = await tab
      .goto(`${site.origin}/repo/${path}`, { waitUntil: 'commit', timeout: 10_000 })
      .catch(() => null); // a download (the WebAssembly) is no page
    if (response?.fromServiceWorker()) answeredByWorker.push(path);
  }
  await tab.close();
  expect.soft(answeredByWorker).toEqual([]);
  expect(await cacheEntries(page)).toEqual(before);
  // The page's own requests: a listed file with a query is the file, stored by its plain
  // address; anything else goes to the network as it was asked and is not stored.
  const build = encodeURIComponent(builtAs());
  const fetched = await page.evaluate(async (build) => {
    const get = async (path: string) => {
      const response = await fetch(`/repo/hearth/${path}`);
      const bytes = new Uint8Array(await response.arrayBuffer());
      return `${response.status} ${new TextDecoder().decode(bytes.slice(0, 4))}`;
    };
    return {
      lib: await get(`@${build}/lib.js?n=2`),
      wasm: await get('wllama.wasm?x=2'),
      compat: await get(`@${build}/wllama-compat/3.13.0/wllama.wasm?x=3`),
      outside: await get('..%2fpixel.svg'),
      spelled: await get('lib.js%3Fn=3'),
    };
  }, build);
  expect(fetched).toEqual({
    lib: '200 /*! ',
    wasm: '200 \0asm',
    compat: '200 \0asm',
    outside: '200 <svg',
    spelled: '404 Not ',
  });
  const files = (await cacheEntries(page)).filter((entry) => entry.includes('/repo/hearth/'));
  const filesUrl = `${site.origin}/repo/hearth/`;
  const paths = files.map((entry) => entry.slice(entry.indexOf(filesUrl) + filesUrl.length));
  expect(paths.filter((path) => path.includes('?'))).toEqual([]);
  expect(
    paths.filter((path) => !HEARTH_FILES.includes(path) && !path.startsWith('__hearth-page__/')),
  ).toEqual([]);
  expect(paths).toEqual(
    expect.arrayContaining(['lib.js', 'wllama.wasm', 'wllama-compat/3.13.0/wllama.wasm']),
  );
  expect(
    (await cacheEntries(page)).filter((entry) => /\/repo\/(index\.html|pixel\.svg)/.test(entry)),
  ).toEqual([]);
  // The site still runs on them, reloaded.
  await open(page);
  expect(await askWithSdk(page, 'after', true)).toBe('after');
});

test('a GGUF added by URL is downloaded and answers the fixture’s sentence exactly through the SDK', async ({
  page,
}) => {
  await open(page);
  const id = await addFixture(page);
  expect(id.phase).toBe('done');
  expect(await askWithSdk(page, 'Tell me something.', false, id.id)).toBe(FIXTURE_SENTENCE);
});

test('a site’s worker answers the Responses API and keeps the conversation, and indexes a PDF in a vector store with an embedding model added by URL, pdf.js coming from the site’s hearth/', async ({
  page,
}) => {
  await open(page);
  const result = await page.evaluate(
    async ({ source, pdf }) => {
      const g = globalThis as unknown as {
        hearth: { baseURL: string };
        OpenAI: new (options: object) => {
          responses: {
            create(
              body: object,
            ): Promise<{ id: string; output_text: string; usage: { input_tokens: number } }>;
          };
          files: { create(body: object): Promise<{ id: string }> };
          vectorStores: {
            create(body: object): Promise<{ id: string }>;
            retrieve(
              id: string,
            ): Promise<{ file_counts: { in_progress: number; completed: number } }>;
            search(
              id: string,
              body: object,
            ): Promise<{ data: { page?: number; content: { text: string }[] }[] }>;
          };
        };
      };
      const client = new g.OpenAI({
        baseURL: g.hearth.baseURL,
        apiKey: 'sk-site',
        dangerouslyAllowBrowser: true,
      });
      const first = await client.responses.create({
        model: 'hearth/echo',
        input: 'My name is Ada',
      });
      const next = await client.responses.create({
        model: 'hearth/echo',
        input: 'again',
        previous_response_id: first.id,
      });
      // An embedding model added by its URL, as a site's code would.
      const headers = { authorization: 'Bearer k', 'content-type': 'application/json' };
      const added = await fetch('/repo/v1/hearth/models', {
        method: 'POST',
        headers,
        body: JSON.stringify({ source, embeddings: true }),
      });
      const { id } = (await added.json()) as { id: string };
      await fetch(`/repo/v1/hearth/models/${id}/download`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ stream: false }),
      });
      const file = await client.files.create({
        file: new File([new Uint8Array(pdf)], 'notes.pdf', { type: 'application/pdf' }),
        purpose: 'assistants',
      });
      const store = await client.vectorStores.create({ file_ids: [file.id], embedding_model: id });
      let counts = (await client.vectorStores.retrieve(store.id)).file_counts;
      for (let i = 0; i < 300 && counts.in_progress > 0; i += 1) {
        await new Promise((r) => setTimeout(r, 100));
        counts = (await client.vectorStores.retrieve(store.id)).file_counts;
      }
      const found = await client.vectorStores.search(store.id, { query: 'zanzibarite' });
      return { text: next.output_text, read: next.usage.input_tokens, counts, hit: found.data[0] };
    },
    { source: FIXTURE_EMBEDDING_URL, pdf: [...SITE_PDF] },
  );
  expect(result.text).toBe('again');
  // The kept turn read again: `My name is Ada` twice (asked and echoed), then `again`.
  expect(result.read).toBe(4 + 4 + 1);
  expect(result.counts).toMatchObject({ in_progress: 0, completed: 1 });
  expect(result.hit?.page).toBe(2);
  expect(result.hit?.content[0]?.text).toContain('zanzibarite');
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
