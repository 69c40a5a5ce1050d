/**
 * `test` for suites whose tests each open the app as a first-time visitor would, but need not pay
 * for the service worker's install every time.
 *
 * In a fresh browser context a test's first `goto` costs about 3.8 s on two cores, 2.5 s of it
 * the worker's install (it precaches 17 MB: WebLLM's library and llama.cpp's wasm) and the reload
 * that follows. So each Playwright worker keeps one context with the app installed,
 * and between tests puts it back to what a fresh profile holds once the worker is installed:
 * - every page closed but the test's own, which is kept for the next test (a page that exists
 *   opens the app about a second sooner than a new one) and left at the app's icon: leaving the
 *   app, like closing it, ends its engine host, the host's worker and its downloads; what the
 *   test changed in it for good is undone (init scripts and bindings removed, routes, emulated
 *   media, viewport and extra headers put back: `PAGE_UNDONE`), and a page changed in a way
 *   that cannot be undone (`PAGE_LASTING`) is closed;
 * - the service worker stopped (the DevTools protocol's `ServiceWorker.stopAllWorkers`; Firefox:
 *   see below) and, once storage is emptied, started again: the next page finds one with no
 *   memory of the last test;
 * - IndexedDB, localStorage, cookies and the HTTP cache emptied, and every cache but those the
 *   first boot filled (the precache) deleted: conversations, settings, keys, servers, added and
 *   downloaded models are gone;
 * - routes, permissions, offline mode, extra headers and the listeners the test added to the
 *   context and to the kept page, undone.
 *
 * A test then pays about 0.3 s of reset and 0.6 s of the app's boot (on an idle machine), where a
 * fresh context cost 3.8 s: a new page's renderer and the engine host that closing a page tears
 * down were most of what the first version of this reset left.
 *
 * Not reset: whether storage is persistent (Chromium keeps a grant of `navigator.storage.persist()`
 * for the origin), and the usage `navigator.storage.estimate()` reports (Chromium counts deleted
 * data for a while after); a test that counts the page's requests for persistence, or sets a
 * quota from the usage, wants a fresh context.
 *
 * What cannot be undone (an init script or a binding added to the context), a test that failed, a
 * context the test closed: the context is dropped and the next test warms a new one. A test that
 * is about the install itself (first visit, update, boot) must not use this `test`: in it the
 * first page is controlled from the start.
 *
 * Firefox has no such protocol (no way to stop a service worker from outside): there the worker's
 * registration is removed and made again, which ends the old worker and starts a new one that
 * finds the precache filled (`reinstall` says how). Its HTTP cache is not emptied.
 */
import {
  expect,
  test as base,
  type Browser,
  type BrowserContext,
  type Page,
  type TestInfo,
} from '@playwright/test';
import { makeClient, openApp } from './helpers';

/**
 * The context options the suites set (`test.use`): a warm context serves the tests that share
 * all but the viewport (`keyOf`), which each test's pages are given.
 */
interface Options {
  baseURL: string | undefined;
  viewport: { width: number; height: number } | null;
  hasTouch: boolean;
  isMobile: boolean;
}

/** Context events whose listeners a test may add (removed after it). */
const EVENTS = [
  'page',
  'request',
  'response',
  'requestfinished',
  'requestfailed',
  'console',
  'dialog',
  'serviceworker',
  'weberror',
  'close',
];

/** Context methods whose effect outlives the test with no way to undo it. */
const LASTING = ['addInitScript', 'exposeBinding', 'exposeFunction', 'setGeolocation'] as const;

/** Page events whose listeners a test may add (removed after it, when its page is kept). */
const PAGE_EVENTS = [
  'close',
  'console',
  'crash',
  'dialog',
  'domcontentloaded',
  'download',
  'filechooser',
  'frameattached',
  'framedetached',
  'framenavigated',
  'load',
  'pageerror',
  'popup',
  'request',
  'requestfailed',
  'requestfinished',
  'response',
  'websocket',
  'worker',
];

/**
 * Page methods whose effect outlives the test and that the reset does not undo: a page that had
 * one is closed, not kept.
 */
const PAGE_LASTING = [
  'addLocatorHandler',
  'routeFromHAR',
  'routeWebSocket',
  'setDefaultNavigationTimeout',
  'setDefaultTimeout',
] as const;

/**
 * Page methods whose effect outlives the test, and how the reset undoes it, so that the page is
 * kept all the same (a new one costs the next test about a second, more in Firefox). Init
 * scripts, bindings and routes come with a `Disposable` that removes them. warm-context.spec.ts
 * holds that the next test finds none of it.
 */
const PAGE_UNDONE = {
  addInitScript: undefined,
  exposeBinding: undefined,
  exposeFunction: undefined,
  route: (page) => page.unrouteAll({ behavior: 'ignoreErrors' }),
  // What a context the warm one's options make has: Playwright's defaults.
  emulateMedia: (page) =>
    page.emulateMedia({
      media: null,
      colorScheme: 'light',
      reducedMotion: 'no-preference',
      forcedColors: 'none',
      contrast: 'no-preference',
    }),
  setViewportSize: (page, viewport) => (viewport ? page.setViewportSize(viewport) : undefined),
  setExtraHTTPHeaders: (page) => page.setExtraHTTPHeaders({}),
} satisfies Record<string, ((page: Page, viewport: Options['viewport']) => unknown) | undefined>;

/** What Playwright's context has of Node's EventEmitter but does not declare. */
interface Emitter {
  rawListeners(name: string): unknown[];
  off(name: string, listener: unknown): void;
}

class WarmContext {
  /** Set when the test did something a reset cannot undo. */
  dirty = false;
  /** Set while a suite holds the context from its `beforeAll` to its `afterAll` (`lendToSuite`). */
  lentToSuite = false;
  /** Chromium resets over the DevTools protocol; Firefox by registering the worker again. */
  readonly #chromium: boolean;
  /** The caches the app's first boot filled (the precache): kept between tests. */
  #keep = new Set<string>();
  #listeners = new Map<string, unknown[]>();
  /**
   * The page the next test gets: the last test's, emptied (it shows the app's icon): the app
   * opens sooner in a page that exists than in a new one (the module comment says how much).
   */
  #page: Page | undefined;
  /** Set when the test did something to its page that a reset cannot undo. */
  #pageDirty = false;
  /** What the test did to its page that the reset undoes (`PAGE_UNDONE`), and the disposables. */
  #pageUndo = new Set<keyof typeof PAGE_UNDONE>();
  #pageDisposables: { dispose(): Promise<void> }[] = [];
  #pageListeners = new Map<string, unknown[]>();
  /** The pages whose lasting methods are watched. */
  #watched = new WeakSet<Page>();
  /** The viewport of the test that has the context (its pages get it; `lend`). */
  #viewport: Options['viewport'];

  private constructor(
    readonly context: BrowserContext,
    readonly options: Options,
    readonly key: string,
    /** The app's URL. */
    readonly base: string,
  ) {
    this.#chromium = context.browser()?.browserType().name() === 'chromium';
    this.#viewport = options.viewport;
    context.on('close', () => (this.dirty = true));
    // A page the test opens gets the test's viewport, as in a context of the test's own.
    const newPage = context.newPage.bind(context);
    context.newPage = async () => {
      const page = await newPage();
      const viewport = this.#viewport;
      if (viewport && !sameSize(page.viewportSize(), viewport))
        await page.setViewportSize(viewport);
      return page;
    };
    for (const name of LASTING) {
      const method = context[name].bind(context) as (...args: unknown[]) => Promise<unknown>;
      Object.assign(context, {
        [name]: (...args: unknown[]) => {
          this.dirty = true;
          return method(...args);
        },
      });
    }
  }

  /** A context with the app installed and then emptied, as the tests will find it. */
  static async open(browser: Browser, options: Options, key: string): Promise<WarmContext> {
    const context = await browser.newContext(options);
    const page = await context.newPage();
    await page.goto('./');
    await page.locator('api-status[state="ready"]').waitFor({ state: 'attached', timeout: 30_000 });
    const warm = new WarmContext(context, options, key, page.url());
    // The caches with something in them: the precache. (Looking for a model opens, and so
    // makes, the model caches; they are empty until a test downloads into them.)
    const filled = await page.evaluate(async () => {
      const names = await caches.keys();
      const sizes = await Promise.all(names.map(async (name) => (await caches.open(name)).keys()));
      return names.filter((_, i) => sizes[i]!.length > 0);
    });
    for (const name of filled) warm.#keep.add(name);
    warm.#page = page;
    await warm.reset();
    return warm;
  }

  /**
   * Notes the listeners there are before a test, to remove those it adds, and the test's
   * viewport, which its pages get (the context's own, when it sets none).
   */
  lend(viewport: Options['viewport'] = this.options.viewport): BrowserContext {
    this.#listeners = listenersOf(this.context, EVENTS);
    this.#viewport = viewport;
    return this.context;
  }

  /** The test's page: the one the reset kept, or a new one. */
  async lendPage(): Promise<Page> {
    const page = this.#page ?? (await this.context.newPage());
    this.#page = page;
    this.#pageDirty = false;
    if (!this.#watched.has(page)) {
      this.#watched.add(page);
      for (const name of PAGE_LASTING) {
        const method = page[name].bind(page) as (...args: unknown[]) => Promise<unknown>;
        Object.assign(page, {
          [name]: (...args: unknown[]) => {
            this.#pageDirty = true;
            return method(...args);
          },
        });
      }
      for (const name of Object.keys(PAGE_UNDONE) as (keyof typeof PAGE_UNDONE)[]) {
        const method = page[name].bind(page) as (...args: unknown[]) => Promise<unknown>;
        Object.assign(page, {
          [name]: async (...args: unknown[]) => {
            this.#pageUndo.add(name);
            const result = await method(...args);
            if (isDisposable(result)) this.#pageDisposables.push(result);
            return result;
          },
        });
      }
    }
    this.#pageListeners = listenersOf(page, PAGE_EVENTS);
    // Put back at the reset, as the test's own change would be (`PAGE_UNDONE`).
    const viewport = this.#viewport;
    if (viewport && !sameSize(page.viewportSize(), viewport)) await page.setViewportSize(viewport);
    return page;
  }

  /** Puts the context back to a fresh install's state (the module comment says what that is). */
  async reset(): Promise<void> {
    const { context } = this;
    this.#viewport = this.options.viewport;
    removeAdded(context, this.#listeners);
    let icon = this.#page;
    if (icon && (icon.isClosed() || this.#pageDirty)) icon = undefined;
    if (icon) {
      removeAdded(icon, this.#pageListeners);
      await this.#undo(icon);
    }
    this.#pageUndo.clear();
    this.#pageDisposables = [];
    // Opened before the others close: a context's only page opens more slowly.
    icon ??= await context.newPage();
    this.#page = undefined;
    await Promise.all(context.pages().map((page) => (page === icon ? null : page.close())));
    await context.unrouteAll({ behavior: 'ignoreErrors' });
    await context.clearPermissions();
    await context.setOffline(false);
    await context.setExtraHTTPHeaders({});
    await context.clearCookies();
    // A page of the app's origin that is not the app (its icon), to reach its caches; leaving
    // the app ends the engine host that ran in it, as closing the page would.
    await icon.goto(new URL('favicon.svg', this.base).href);
    await icon.evaluate(
      async (keep) => {
        for (const name of await caches.keys()) {
          if (!keep.includes(name)) await caches.delete(name);
        }
      },
      [...this.#keep],
    );
    if (this.#chromium) await restartOverCdp(icon, this.base);
    else await reinstall(icon);
    this.#page = icon;
  }

  /** Undoes what the test did to the page that is kept (`PAGE_UNDONE`). */
  async #undo(page: Page): Promise<void> {
    for (const disposable of this.#pageDisposables) await disposable.dispose();
    for (const name of this.#pageUndo) await PAGE_UNDONE[name]?.(page, this.options.viewport);
  }
}

function sameSize(a: Options['viewport'], b: Options['viewport']): boolean {
  return a?.width === b?.width && a?.height === b?.height;
}

/**
 * What tells warm contexts apart: a test whose options differ in these needs a context of its
 * own. Not the viewport, which each page is given (`lend`): a phone-sized test borrows the same
 * context as the rest.
 */
function keyOf({ baseURL, hasTouch, isMobile }: Options): string {
  return JSON.stringify({ baseURL, hasTouch, isMobile });
}

function isDisposable(value: unknown): value is { dispose(): Promise<void> } {
  return typeof (value as { dispose?: unknown } | null)?.dispose === 'function';
}

/**
 * Chromium: stops the service worker, empties the origin's storage and the HTTP cache over the
 * DevTools protocol, then starts a fresh worker.
 */
async function restartOverCdp(icon: Page, base: string): Promise<void> {
  const cdp = await icon.context().newCDPSession(icon);
  await cdp.send('ServiceWorker.enable');
  await cdp.send('ServiceWorker.stopAllWorkers');
  await cdp.send('Storage.clearDataForOrigin', {
    origin: new URL(base).origin,
    storageTypes: 'cookies,file_systems,indexeddb,local_storage,websql,shader_cache',
  });
  await cdp.send('Network.clearBrowserCache');
  await cdp.detach();
  // A fresh worker, started now by a request from the icon's page (which it controls): one
  // left stopped makes the next test's first navigation hang once that test has added a route
  // to the context, as Playwright then intercepts the worker's requests too.
  expect(await icon.evaluate(() => navigator.serviceWorker.controller !== null)).toBe(true);
  await icon.evaluate(() => fetch('favicon.svg').then((response) => response.status));
}

/**
 * Firefox, which has no way to stop a worker from outside: the registration is removed, and its
 * worker ends once the icon, its last client, leaves: it is reloaded, a new document of the same
 * origin (going to about:blank and back cost Firefox two process switches, about a second a test
 * under load), and pages are not kept in the back-forward cache, where they would still be its
 * clients (playwright.config.ts turns it off). IndexedDB and localStorage are then emptied from
 * the icon's page, and the same script is registered again: its install finds the precache
 * filled and fetches nothing, and it activates and claims the icon at once. Firefox's HTTP cache is kept: the GGUF downloads ask with
 * `cache: 'no-store'`, and the tests' servers say what may be stored.
 */
async function reinstall(icon: Page): Promise<void> {
  const worker = await icon.evaluate(async () => {
    const registration = await navigator.serviceWorker.getRegistration();
    const script = registration?.active?.scriptURL;
    if (!registration || !script) throw new Error('the app has no active service worker');
    await registration.unregister();
    // The tests run a build, whose worker is a classic script (main.ts registers it so).
    return { script, scope: registration.scope };
  });
  await icon.reload();
  await icon.evaluate(async ({ script, scope }) => {
    localStorage.clear();
    const names = (await indexedDB.databases()).flatMap(({ name }) => (name ? [name] : []));
    await Promise.all(
      names.map(
        (name) =>
          new Promise((resolve, reject) => {
            const request = indexedDB.deleteDatabase(name);
            request.onsuccess = resolve;
            request.onerror = () => reject(request.error ?? new Error(`${name} not deleted`));
          }),
      ),
    );
    await navigator.serviceWorker.register(script, { scope });
    await navigator.serviceWorker.ready;
    if (!navigator.serviceWorker.controller) {
      await new Promise((resolve) =>
        navigator.serviceWorker.addEventListener('controllerchange', resolve, { once: true }),
      );
    }
  }, worker);
}

/** The listeners `target` has now for each of `events`. */
function listenersOf(target: object, events: string[]): Map<string, unknown[]> {
  const emitter = target as Emitter;
  return new Map(events.map((name) => [name, emitter.rawListeners(name)]));
}

/** Removes the listeners `target` has that were not there in `before`. */
function removeAdded(target: object, before: Map<string, unknown[]>): void {
  const emitter = target as Emitter;
  for (const [name, had] of before) {
    for (const listener of emitter.rawListeners(name)) {
      if (!had.includes(listener)) emitter.off(name, listener);
    }
  }
}

export const test = base.extend<
  { freshContext: boolean },
  { warmContexts: { current?: WarmContext } }
>({
  /** `test.use({ freshContext: true })` for tests about a first visit: a new context, as usual. */
  freshContext: [false, { option: true }],
  warmContexts: [
    // eslint-disable-next-line no-empty-pattern -- Playwright reads the fixtures a fixture uses from this pattern
    async ({}, use) => {
      const pool: { current?: WarmContext } = {};
      await use(pool);
      await pool.current?.context.close();
    },
    { scope: 'worker' },
  ],
  page: async ({ context, warmContexts }, use) => {
    const warm = warmContexts.current;
    await use(warm?.context === context ? await warm.lendPage() : await context.newPage());
  },
  context: async (
    { browser, baseURL, viewport, hasTouch, isMobile, freshContext, warmContexts },
    use,
    testInfo,
  ) => {
    const options: Options = { baseURL, viewport, hasTouch, isMobile };
    // A suite that holds the warm context (`lendToSuite`) keeps it; its own tests get new ones.
    if (freshContext || warmContexts.current?.lentToSuite) {
      const context = await browser.newContext(options);
      await use(context);
      await context.close();
      return;
    }
    const key = keyOf(options);
    if (warmContexts.current?.key !== key) {
      await warmContexts.current?.context.close();
      warmContexts.current = undefined;
      warmContexts.current = await WarmContext.open(browser, options, key);
    }
    const warm = warmContexts.current;
    await use(warm.lend(viewport));
    if (warm.dirty || testInfo.status !== testInfo.expectedStatus) {
      warmContexts.current = undefined;
      await warm.context.close().catch(() => undefined);
      return;
    }
    await warm.reset();
  },
});

/** The worker's warm contexts: `warmContexts` in a hook's fixtures. */
type Pool = { current?: WarmContext };

/**
 * For a suite whose tests share one page of the app (they send requests and read the answers):
 * the worker's warm context, held from the suite's `beforeAll` until `endSuite` in its
 * `afterAll`, and its page. A context of the suite's own would install the service worker again
 * (about 2.5 s, more in Firefox); the warm one is reset instead. The suite's API tests care only
 * for the app's origin, so a warm context of any options serves; where there is none yet, one is
 * opened with the project's options, as its UI tests will want it. A test of the suite that asks
 * for `page` or `context` gets a new context of its own while the suite holds this one.
 */
export async function lendToSuite(
  { browser, warmContexts }: { browser: Browser; warmContexts: Pool },
  testInfo: TestInfo,
): Promise<Page> {
  if (!warmContexts.current) {
    // The values the test-scoped fixtures resolve to when a project sets none (the key compares
    // them): Playwright's default viewport, no touch, not mobile.
    const {
      baseURL,
      viewport = { width: 1280, height: 720 },
      hasTouch = false,
    } = testInfo.project.use;
    const options: Options = {
      baseURL,
      viewport,
      hasTouch,
      isMobile: !!testInfo.project.use.isMobile,
    };
    warmContexts.current = await WarmContext.open(browser, options, keyOf(options));
  }
  const warm = warmContexts.current;
  warm.lentToSuite = true;
  warm.lend();
  return warm.lendPage();
}

/** Gives the warm context back after a suite (`lendToSuite`): reset, or dropped if it must be. */
export async function endSuite(warmContexts: Pool): Promise<void> {
  const warm = warmContexts.current;
  if (!warm?.lentToSuite) return;
  warm.lentToSuite = false;
  const reset = warm.dirty ? Promise.reject(new Error('dirty')) : warm.reset();
  await reset.catch(async () => {
    warmContexts.current = undefined;
    await warm.context.close().catch(() => undefined);
  });
}

/**
 * `test` whose `page` is one page of the app, booted once for the whole file (`lendToSuite`): for
 * suites whose tests only send requests and read the answers, so that each does not pay the
 * app's boot. Call at the top of the file, instead of opening the app in each test. A test that
 * fails restarts Playwright's worker, and the rest get a fresh page.
 */
export function sharedAppTest() {
  let shared: Page | undefined;
  test.beforeAll(async ({ browser, warmContexts }, testInfo) => {
    shared = await lendToSuite({ browser, warmContexts }, testInfo);
    await openApp(shared);
  });
  test.afterAll(async ({ warmContexts }) => {
    await endSuite(warmContexts);
  });
  return test.extend({
    // eslint-disable-next-line no-empty-pattern -- Playwright reads the fixtures a fixture uses from this pattern
    page: async ({}, use) => {
      await use(shared!);
    },
  });
}

/**
 * The one page of a serial suite of the GGUF models: the model server started, the warm context
 * lent to the suite (`lendToSuite`; `endSuite` in its `afterAll`), the app opened, and `ready`
 * run in the page (by default the `openai` SDK's `client`).
 */
export async function openSuitePage(
  fixtures: { browser: Browser; warmContexts: Pool },
  testInfo: TestInfo,
  server: { start(): Promise<void> },
  ready: (page: Page) => Promise<void> = (page) => makeClient(page),
): Promise<Page> {
  await server.start();
  const page = await lendToSuite(fixtures, testInfo);
  await openApp(page);
  await ready(page);
  return page;
}
