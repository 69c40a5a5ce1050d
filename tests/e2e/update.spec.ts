/**
 * Updates as docs/architecture.md (Offline, installation and updates) says: two real builds of the
 * app, served one after the other from the same origin. The new service worker installs in the
 * background and waits; every open tab offers "Reload to update"; once accepted, a stream running
 * during the switch completes, every tab reloads into the new build, the API keeps answering, and
 * nothing the old worker does not own is touched: WebLLM's caches, Hearth's kept model files,
 * anyone else's cache, the conversations.
 */
import { readFileSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { extname, join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { build } from 'vite';
import { hostStatus, streamInPage } from './helpers';
import { openChat, replies, send, userMessages } from './ui';

const PORT = Number(process.env.E2E_PORT ?? 4179) + 13;
const ORIGIN = `http://127.0.0.1:${PORT}/`;
const BUILDS = ['update-one', 'update-two'] as const;
const outDir = (id: string) => `dist-e2e-${PORT}-${id}`;

const TYPES: Record<string, string> = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.json': 'application/json',
  '.webmanifest': 'application/manifest+json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.wasm': 'application/wasm',
};

/** A static server whose files come from one build or the other, switched by the test. */
let root = outDir(BUILDS[0]);
let server: Server;

test.describe.configure({ mode: 'serial', timeout: 180_000 });

test.beforeAll(async () => {
  test.setTimeout(240_000);
  for (const id of BUILDS) {
    process.env.HEARTH_BUILD = id;
    process.env.HEARTH_OUT_DIR = outDir(id);
    await build({ logLevel: 'error' });
  }
  delete process.env.HEARTH_BUILD;
  delete process.env.HEARTH_OUT_DIR;
  server = createServer((request, response) => {
    let path = decodeURIComponent(new URL(request.url ?? '/', ORIGIN).pathname);
    if (path.endsWith('/')) path += 'index.html';
    const file = join(root, path);
    try {
      if (!statSync(file).isFile()) throw new Error('not a file');
      response.writeHead(200, {
        'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
        // As a static host serves sw.js: the browser checks it for updates.
        'cache-control': 'no-cache',
      });
      response.end(readFileSync(file));
    } catch {
      response.writeHead(404).end('not found');
    }
  });
  await new Promise<void>((resolve) => server.listen(PORT, '127.0.0.1', resolve));
});

test.afterAll(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
});

const buildOf = async (page: Page) => (await hostStatus(page)).host.build;

test('a new version waits, is offered in every tab, and takes over without cutting a stream', async ({
  context,
}) => {
  const a = await context.newPage();
  const b = await context.newPage();
  await openChat(a, ORIGIN);
  await openChat(b, ORIGIN);
  expect(await buildOf(a)).toBe('update-one');
  await send(a, 'kept across the update');
  await expect(replies(a)).toHaveText(['kept across the update']);
  // What the old worker does not own: WebLLM's caches, Hearth's kept files, someone else's.
  await a.evaluate(async () => {
    for (const name of [
      'webllm/model',
      'webllm/config',
      'webllm/wasm',
      'hearth/files',
      'not-ours',
    ]) {
      await (await caches.open(name)).put(`/kept/${name}`, new Response(name));
    }
  });

  // The new build is deployed; the browser finds it and installs it in the background.
  root = outDir(BUILDS[1]);
  await b.evaluate(async () => (await navigator.serviceWorker.getRegistration())?.update());
  for (const page of [a, b]) {
    await expect(page.getByText('A new version of Hearth is ready.')).toBeVisible();
  }
  // It waits: the old build still answers.
  expect(await buildOf(b)).toBe('update-one');

  // A stream runs in one tab while the other accepts the update.
  const stream = streamInPage(a, Array.from({ length: 80 }, (_, i) => `t${i}`).join(' '), 40);
  await expect
    .poll(() => a.evaluate(() => (globalThis as { streamed?: number }).streamed ?? 0))
    .toBeGreaterThan(5);
  await b.getByRole('button', { name: 'Reload to update' }).click();
  await expect(b.getByText('Updating once the replies in progress are done…')).toBeVisible();
  const { status, events } = await stream;
  expect(status).toBe(200);
  expect(events.at(-1)?.data).toBe('[DONE]');
  const text = events
    .slice(0, -1)
    .map((e) => JSON.parse(e.data) as { choices: { delta: { content?: string } }[] })
    .map((c) => c.choices[0]?.delta.content ?? '')
    .join('');
  expect(text).toBe(Array.from({ length: 80 }, (_, i) => `t${i}`).join(' '));

  // Both tabs reload into the new build, and the API answers there.
  for (const page of [a, b]) {
    await expect
      .poll(() => buildOf(page).catch(() => 'reloading'), { timeout: 30_000 })
      .toBe('update-two');
    await expect(page.locator('api-status')).toHaveAttribute('state', 'ready');
  }
  await expect(a.getByText('A new version of Hearth is ready.')).toHaveCount(0);
  await expect(userMessages(a)).toHaveText(['kept across the update']);
  await send(a, 'after the update');
  await expect(replies(a).last()).toHaveText('after the update');
  const kept = await a.evaluate(async () => {
    const found: string[] = [];
    for (const name of [
      'webllm/model',
      'webllm/config',
      'webllm/wasm',
      'hearth/files',
      'not-ours',
    ]) {
      const hit = await (await caches.open(name)).match(`/kept/${name}`);
      if (hit) found.push(await hit.text());
    }
    return found;
  });
  expect(kept).toEqual([
    'webllm/model',
    'webllm/config',
    'webllm/wasm',
    'hearth/files',
    'not-ours',
  ]);
});
