/**
 * Offline first: after one visit the app, the API, the echo engine, the downloaded models (the
 * fixture GGUF answering through llama.cpp) and the conversations work with the network off; a
 * download started offline says why it fails; and the app is installable by Chromium's rules.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, expect, test, type Page } from '@playwright/test';
import { CHROMIUM_ARGS, findChromium } from '../../scripts/browsers.mjs';
import {
  askFixture,
  downloadFixture,
  FIXTURE_ID,
  FIXTURE_PATH,
  FIXTURE_SENTENCE,
} from './fixture-model';
import { ask, hostStatus } from './helpers';
import { ModelServer, TINY_ID } from './model-server';
import { composer, openChat, replies, send, userMessages } from './ui';

const server = new ModelServer();
test.beforeAll(() => server.start());
test.afterAll(() => server.stop());
test.beforeEach(() => server.reset());

/** Whether a URL the app does not precache can be fetched: false proves the network is off. */
const networkWorks = (page: Page) =>
  page.evaluate(async () => {
    try {
      await fetch(`not-precached-${Math.random()}.txt`, { cache: 'no-store' });
      return true;
    } catch {
      return false;
    }
  });

test('after one visit the app, the API, the echo engine and the conversations work offline', async ({
  page,
  context,
}) => {
  await openChat(page);
  await send(page, 'said while online');
  await expect(replies(page)).toHaveText(['said while online']);
  // The worker that answers the offline reload is active (Firefox once went to the network).
  await page.evaluate(async () => void (await navigator.serviceWorker.ready));
  await context.setOffline(true);
  try {
    await page.reload();
    await expect(composer(page)).toBeVisible();
    expect(await networkWorks(page)).toBe(false);
    await expect(page.getByRole('status').filter({ hasText: 'Offline.' })).toBeVisible();
    await expect(page.locator('api-status')).toHaveAttribute('state', 'ready');
    await expect(userMessages(page)).toHaveText(['said while online']);
    await send(page, 'said while offline');
    await expect(replies(page)).toHaveText(['said while online', 'said while offline']);
    expect(await ask(page, 'plain fetch offline')).toEqual({
      status: 200,
      content: 'plain fetch offline',
    });
    // Every view renders from the precache.
    for (const view of ['Models', 'Settings', 'Developer']) {
      await page.getByRole('link', { name: view }).click();
      await expect(page.getByRole('heading').first()).toBeVisible();
    }
  } finally {
    await context.setOffline(false);
  }
});

/** Why the WebLLM cases below skip Firefox: the GGUF case covers it. */
const NO_WEBGPU = 'an MLC model needs WebGPU, which Firefox on Linux lacks (the GGUF case runs)';

test('a downloaded model loads offline, every file from the device', async ({
  page,
  context,
  browserName,
}) => {
  test.skip(browserName === 'firefox', NO_WEBGPU);
  await openChat(page);
  const done = await page.evaluate(async (id) => {
    const response = await fetch(`v1/hearth/models/${id}/download`, {
      method: 'POST',
      headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
      body: JSON.stringify({ stream: false }),
    });
    return ((await response.json()) as { phase: string }).phase;
  }, TINY_ID);
  expect(done).toBe('done');
  await context.setOffline(true);
  try {
    await page.reload();
    await expect(page.locator('api-status')).toHaveAttribute('state', 'ready');
    expect(await networkWorks(page)).toBe(false);
    const requestsBefore = server.requests.length;
    const load = await page.evaluate(async (id) => {
      const response = await fetch(`v1/hearth/models/${id}/load`, {
        method: 'POST',
        headers: { authorization: 'Bearer k' },
      });
      return (await response.json()) as { error: { message: string } };
    }, TINY_ID);
    // The tiny model's library is not WebAssembly: the load gets as far as compiling it, which
    // means every file came from the device (a missing one would fail the fetch).
    expect(load.error.message).toMatch(new RegExp(`^Loading ${TINY_ID} failed: `));
    expect(load.error.message).not.toMatch(/fetch|network/i);
    expect(server.requests.length).toBe(requestsBefore);
    // The host reads what is on the device as it starts, beside the load: wait for that read.
    await expect.poll(async () => (await hostStatus(page)).models).toContain(TINY_ID);
  } finally {
    await context.setOffline(false);
  }
});

test('after a reload offline the downloaded fixture model answers its sentence through llama.cpp, and no request reaches the model server', async ({
  page,
  context,
}) => {
  await openChat(page);
  await downloadFixture(page);
  // The server counts the download's requests: what it would count of a load too.
  expect(server.ggufRequests.some((r) => r.includes(FIXTURE_PATH))).toBe(true);
  const requestsBefore = server.ggufRequests.length;
  await context.setOffline(true);
  try {
    await page.reload();
    await expect(page.locator('api-status')).toHaveAttribute('state', 'ready');
    expect(await networkWorks(page)).toBe(false);
    expect(await askFixture(page)).toMatchObject({
      status: 200,
      content: FIXTURE_SENTENCE,
      finish_reason: 'stop',
    });
    expect((await hostStatus(page)).loaded_model).toBe(FIXTURE_ID);
    expect(server.ggufRequests.length).toBe(requestsBefore);
  } finally {
    await context.setOffline(false);
  }
});

test('a download started offline fails with a clear message', async ({
  page,
  context,
  browserName,
}) => {
  test.skip(browserName === 'firefox', NO_WEBGPU);
  await openChat(page);
  await context.setOffline(true);
  try {
    await page.reload();
    await page.getByRole('link', { name: 'Models' }).click();
    const tiny = page
      .getByRole('list', { name: 'Models' })
      .getByRole('listitem', { name: TINY_ID });
    await tiny.getByRole('button', { name: 'Download' }).click();
    await expect(tiny.getByRole('alert')).toContainText(/offline/);
    // Nothing was stored: Retry, and nothing that cannot act (no Resume, no Delete of 0 bytes).
    await expect(tiny.getByRole('button', { name: /^Retry/ })).toBeVisible();
    await expect(tiny.getByRole('button', { name: /^(Resume|Delete)/ })).toHaveCount(0);
  } finally {
    await context.setOffline(false);
  }
});

test('the app is installable: its manifest and icons meet Chromium’s rules', async ({
  baseURL,
}) => {
  // Chromium offers no installation in an incognito profile, which a test context is: this one
  // has a profile of its own.
  const executablePath = await findChromium();
  const context = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'hearth-')), {
    executablePath: executablePath!,
    args: [...CHROMIUM_ARGS, '--enable-unsafe-webgpu'],
    baseURL: baseURL!,
  });
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    await openChat(page);
    const cdp = await context.newCDPSession(page);
    const { errors, data, url } = await cdp.send('Page.getAppManifest');
    expect(errors).toEqual([]);
    expect(url).toBe(new URL('manifest.webmanifest', page.url()).href);
    const manifest = JSON.parse(data!) as {
      name: string;
      short_name: string;
      start_url: string;
      display: string;
      icons: { src: string; sizes: string; type: string; purpose?: string }[];
    };
    expect(manifest).toMatchObject({
      short_name: 'Hearth',
      display: 'standalone',
      start_url: './',
    });
    expect(manifest.name).toBeTruthy();
    // Chromium wants PNG icons of at least 192 and 512 pixels; each must be what it says.
    for (const size of [192, 512]) {
      const icon = manifest.icons.find(
        (i) => i.sizes === `${size}x${size}` && i.purpose !== 'maskable',
      );
      expect(icon?.type).toBe('image/png');
      const dims = await page.evaluate(async (src) => {
        const bytes = new DataView(await (await fetch(src)).arrayBuffer());
        // PNG: the signature, then the IHDR chunk with width and height.
        return {
          png: bytes.getUint32(0) === 0x89504e47,
          w: bytes.getUint32(16),
          h: bytes.getUint32(20),
        };
      }, new URL(icon!.src, url).href);
      expect(dims).toEqual({ png: true, w: size, h: size });
    }
    expect(manifest.icons.some((i) => i.purpose === 'maskable')).toBe(true);
    // Chromium's own verdict: no installability error (a controlling service worker included).
    const { installabilityErrors } = await cdp.send('Page.getInstallabilityErrors');
    expect(installabilityErrors).toEqual([]);
  } finally {
    await context.close();
  }
});
