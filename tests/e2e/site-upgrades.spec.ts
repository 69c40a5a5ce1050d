/**
 * Upgrades of a site that installs `hearth-llm` (the fixture sites of sites/make.mjs, each with an
 * older build beside it: the build id renamed in every script, as `HEARTH_BUILD` writes it),
 * served by a static server that caches as GitHub Pages does (`max-age=600`, ETags), and deployed
 * by pointing the served folder at the new build: a returning visitor's visits with Hearth's own
 * worker, a hand-written worker and vite-plugin-pwa's (skipping waiting or not), a loader the HTTP
 * cache kept, and a site whose files are of two builds.
 */
import {
  cpSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { expect, test, type BrowserContext, type Page } from '@playwright/test';
import {
  builtAs,
  OLD_BUILD,
  PLAIN_PUBLIC,
  renameBuild,
  SITES_SCRATCH,
  VITE_DIST,
  VITE_OLD_DIST,
  VITE_WAITS_DIST,
  VITE_WAITS_OLD_DIST,
} from './sites/make.mjs';
import { askWithSdk, openSite } from './sites/site-page';
import { StaticServer } from './sites/static-server.mjs';

/** Ports of their own, apart from site.spec.ts's (E2E_SITE_PORT moves them, side by side). */
const SITE_PORT = Number(process.env.E2E_SITE_PORT ?? 4193);
/** The plain site with a `hearth-sw.js` of another build beside the new loader (`/stale/`). */
const STALE_PUBLIC = join(SITES_SCRATCH, 'stale-public');
/**
 * The plain site as its older build, and the folders the server serves, each pointed at the old
 * build first and at the new one by the deploy: `/up/`, and `/cached/` for the visit whose loader
 * the HTTP cache gives.
 */
const OLD_PUBLIC = join(SITES_SCRATCH, 'old-public');
const UPGRADED = join(SITES_SCRATCH, 'upgraded');
const CACHED = join(SITES_SCRATCH, 'cached');
/**
 * A site with a hand-written worker that precaches its pages and imports `hearth-sw.js`, before
 * and after the same upgrade (its own files unchanged: only Hearth's are new), and `/hand/`.
 */
const HAND_OLD = join(SITES_SCRATCH, 'hand-old');
const HAND_NEW = join(SITES_SCRATCH, 'hand-new');
const HAND_UPGRADED = join(SITES_SCRATCH, 'hand-upgraded');
/** The Vite sites' `dist/` (its `/repo/`), of the older build, then of the new. */
const VITE_UPGRADED = join(SITES_SCRATCH, 'vite-upgraded');
const VITE_WAITS_UPGRADED = join(SITES_SCRATCH, 'vite-waits-upgraded');

const site = new StaticServer(SITE_PORT + 3, {
  '/stale/': STALE_PUBLIC,
  '/up/': UPGRADED,
  '/cached/': CACHED,
  '/hand/': HAND_UPGRADED,
});
/** The Vite sites, each on an origin of its own (their base is `/repo/`). */
const viteUpgraded = new StaticServer(SITE_PORT + 6, { '/repo/': VITE_UPGRADED });
const viteWaitsUpgraded = new StaticServer(SITE_PORT + 8, { '/repo/': VITE_WAITS_UPGRADED });

test.beforeAll(async () => {
  mkdirSync(SITES_SCRATCH, { recursive: true });
  // The stale site: the plain site's files, but a hearth-sw.js of the older build.
  rmSync(STALE_PUBLIC, { recursive: true, force: true });
  mkdirSync(STALE_PUBLIC);
  for (const name of ['index.html', 'openai.js', 'hearth']) {
    symlinkSync(join(PLAIN_PUBLIC, name), join(STALE_PUBLIC, name));
  }
  const sw = readFileSync(join(PLAIN_PUBLIC, 'hearth-sw.js'), 'utf8');
  writeFileSync(join(STALE_PUBLIC, 'hearth-sw.js'), sw.replaceAll(builtAs(), OLD_BUILD));
  rmSync(OLD_PUBLIC, { recursive: true, force: true });
  cpSync(PLAIN_PUBLIC, OLD_PUBLIC, { recursive: true });
  renameBuild(OLD_PUBLIC, builtAs(), OLD_BUILD);
  makeHandSite(HAND_OLD, OLD_PUBLIC);
  makeHandSite(HAND_NEW, PLAIN_PUBLIC);
  relink(UPGRADED, OLD_PUBLIC);
  relink(CACHED, OLD_PUBLIC);
  relink(HAND_UPGRADED, HAND_OLD);
  relink(VITE_UPGRADED, VITE_OLD_DIST);
  relink(VITE_WAITS_UPGRADED, VITE_WAITS_OLD_DIST);
  await Promise.all([site.start(), viteUpgraded.start(), viteWaitsUpgraded.start()]);
});
test.afterAll(() => Promise.all([site, viteUpgraded, viteWaitsUpgraded].map((s) => s.stop())));

/** Opens `path` of a site (`server`, the plain site's by default) and waits for `startHearth()`. */
const open = (page: Page, path: string, server: { origin: string } = site) =>
  openSite(page, server.origin, path);

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

/** Points `link` at `target`: a deploy, as far as the static server can tell. */
function relink(link: string, target: string): void {
  // Made beside it and renamed over it: no request ever finds the folder missing mid-deploy.
  const next = `${link}.next`;
  rmSync(next, { force: true });
  symlinkSync(target, next);
  renameSync(next, link);
}

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
  expect(error.message).toContain(`/stale/hearth-sw.js on the server is build ${OLD_BUILD}`);
  expect(error.message).toContain(`/stale/hearth/hearth.js is build ${builtAs()}`);
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

/**
 * A site to upgrade: where it is served, and its deploy — `link`, the folder the server serves,
 * pointed at the new build `to` (it points at the old one when the tests start).
 */
interface Upgrade {
  server: StaticServer;
  base: string;
  link: string;
  to: string;
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
      // The page's own `startHearth()` (every fixture page keeps its promise): a page the site
      // has just reloaded may not have started yet.
      await page.waitForFunction(() => 'hearthStarted' in globalThis);
      return await page.evaluate(
        async ({ base, text }) => {
          const g = globalThis as unknown as {
            hearthStarted: Promise<{ baseURL: string; version: string }>;
            OpenAI: new (options: object) => {
              chat: { completions: { create(body: object): Promise<unknown> } };
            };
          };
          const hearth = await g.hearthStarted;
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
            baseURL: hearth.baseURL,
            apiKey: 'sk-site',
            dangerouslyAllowBrowser: true,
          });
          const reply = (await client.chat.completions.create({
            model: 'hearth/echo',
            messages: [{ role: 'user', content: text }],
          })) as { choices: { message: { content: string } }[] };
          return { version: hearth.version, builds, reply: reply.choices[0]!.message.content };
        },
        { base, text },
      );
    } catch (error) {
      // Reloaded while it was asked (each browser words it its own way): ask the new page.
      if (tries === 3 || !/destroyed|navigat/i.test(String(error))) throw error;
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
  { server, base, link, to, reloadsTabs = false }: Upgrade,
) {
  const errors: string[] = [];
  const build = builtAs();
  const visit = async () => {
    const page = await context.newPage();
    page.on('pageerror', (error) => errors.push(error.message));
    await open(page, base, server).catch(async (err: unknown) => {
      // A site that reloads its tabs when its new worker takes over may reload this one while
      // it starts (Firefox, once): the visit is then the page as reloaded.
      if (!reloadsTabs || !String(err).includes('Execution context was destroyed')) throw err;
      await open(page, base, server);
    });
    return page;
  };
  /**
   * The page runs one build whole, `expected` where given, and answers. (A first visit loads
   * Hearth's files from the network before a worker controls it, by their plain names.)
   */
  const check = async (page: Page, text: string, expected?: string, first = false) => {
    const seen = await visited(page, base, text);
    expect(seen.builds).toEqual(first ? [] : [seen.version]);
    expect(seen.reply).toBe(text);
    if (expected !== undefined) expect(seen.version).toBe(expected);
    return seen.version;
  };
  const before = await visit();
  await check(before, 'before the upgrade', OLD_BUILD, true);
  await before.close();
  const leftOpen = await visit();

  // The deploy: the same address now serves the new build (cached for ten minutes, with ETags).
  relink(link, to);
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
  // Installing is the new worker's precache of the whole build: on two loaded cores (CI's two
  // lanes side by side) Firefox once took over 30 s.
  await expect.poll(newer, { timeout: 60_000 }).toBe(build);
  await watching.close();
  // (A tab the site reloads runs the new build once reloaded: the old one until then.)
  await check(leftOpen, 'still answering', reloadsTabs ? undefined : OLD_BUILD);
  await leftOpen.close();
  await during.close();
  // The browser activates a waiting worker once the last tab of the old one has gone (Firefox a
  // moment after).
  const outside = await context.newPage();
  await outside.goto(`${server.origin}/elsewhere`);
  await expect.poll(() => buildOf(outside, 'active', base), { timeout: 30_000 }).toBe(build);
  await outside.close();

  // The next visit is the new build whole.
  const after = await visit();
  const version = await check(after, 'after the upgrade', build);
  expect(await buildOf(after, 'active', base)).toBe(version);
  expect(errors).toEqual([]);
}

test.describe('a returning visitor after an upgrade runs one build whole at every visit, never errs, keeps a tab left open answering, and is on the new build once its worker takes over', () => {
  const upgrades: [string, Upgrade][] = [
    ['with Hearth’s own worker', { server: site, base: '/up/', link: UPGRADED, to: PLAIN_PUBLIC }],
    [
      'with a hand-written worker that precaches the pages, imports hearth-sw.js through the HTTP cache and waits',
      { server: site, base: '/hand/', link: HAND_UPGRADED, to: HAND_NEW },
    ],
    [
      'with vite-plugin-pwa’s generateSW worker, which skips waiting and claims the open tabs, and its registerSW, which reloads them',
      {
        server: viteUpgraded,
        base: '/repo/',
        link: VITE_UPGRADED,
        to: VITE_DIST,
        reloadsTabs: true,
      },
    ],
    [
      'with vite-plugin-pwa’s generateSW worker as it comes, which waits for the tabs to close',
      { server: viteWaitsUpgraded, base: '/repo/', link: VITE_WAITS_UPGRADED, to: VITE_WAITS_DIST },
    ],
  ];
  for (const [title, upgrade] of upgrades) {
    test(title, ({ context }) => returningVisitor(context, upgrade));
  }
});

test('a page that the HTTP cache gives a loader of the build before, with no worker in control, reloads once into the build the site serves, with no error', async ({
  context,
}) => {
  const errors: string[] = [];
  context.on('weberror', (error) => errors.push(error.error().message));
  const first = await context.newPage();
  expect((await open(first, '/cached/')).version).toBe(OLD_BUILD);
  // The worker goes (site data cleared but the HTTP cache kept, say): the next visit is not
  // controlled, and its loader comes from the HTTP cache, which holds it for ten minutes.
  await first.evaluate(async () => {
    await (await navigator.serviceWorker.getRegistration('/cached/'))?.unregister();
  });
  await first.close();
  relink(CACHED, PLAIN_PUBLIC);
  const next = await context.newPage();
  let loads = 0;
  next.on('load', () => (loads += 1));
  const hearth = await open(next, '/cached/');
  expect(hearth.version).toBe(builtAs());
  expect(loads).toBe(2);
  expect(await askWithSdk(next, 'from the cache and back', true)).toBe('from the cache and back');
  expect(errors).toEqual([]);
});
