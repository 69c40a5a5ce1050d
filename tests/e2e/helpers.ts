import { readFileSync } from 'node:fs';
import { expect, test, type Page } from '@playwright/test';
import type OpenAIClass from 'openai';
import type { HearthSdks as HearthSdksType } from './fixtures/sdks-global';
import { OPENAI_BUNDLE } from './sites/make.mjs';

/** Where global-setup writes the browser bundle of the `openai` SDK (the fixture sites copy it). */
export { OPENAI_BUNDLE };

/**
 * Where global-setup writes the browser bundle of the Vercel AI SDK and LangChain's OpenAI
 * embeddings (`loadSdks`), apart per e2e port as the sites are (sites/make.mjs).
 */
export const SDKS_BUNDLE = new URL(
  `./.cache/sdks-${process.env.E2E_PORT ?? 4179}/sdks.js`,
  import.meta.url,
);

declare global {
  /** The `openai` SDK's client class, injected by `openApp`. */
  var OpenAI: typeof OpenAIClass;
  /** `embed`, `embedMany`, `createOpenAICompatible` and `OpenAIEmbeddings`, from `loadSdks`. */
  var HearthSdks: HearthSdksType;
}

/**
 * Opens the app, waits until its API answers, and loads the `openai` SDK into the page (`sdk:
 * false` leaves it out: the chat app's tests drive the page, and evaluating the SDK's 360 kB
 * costs each boot a tenth of a second).
 */
export async function openApp(page: Page, path = './', { sdk = true } = {}): Promise<void> {
  await page.goto(path);
  // A first visit shows the app only after its one reload (src/boot-gate.ts): the worker's
  // install, with its precache, comes first; on a loaded machine that takes a while.
  await expect(page.locator('api-status')).toHaveAttribute('state', 'ready', { timeout: 30_000 });
  if (sdk) await loadOpenAI(page);
}

let openAIBundle: string | undefined;

/** Loads the `openai` SDK's browser bundle into the page, as the global `OpenAI`. */
export async function loadOpenAI(page: Page): Promise<void> {
  openAIBundle ??= readFileSync(OPENAI_BUNDLE, 'utf8');
  // Evaluated over the DevTools protocol, as the page's Content Security Policy allows no
  // inline script.
  await page.evaluate(openAIBundle);
}

/**
 * Loads the Vercel AI SDK (`embed`, `embedMany`, `createOpenAICompatible`) and LangChain's
 * `OpenAIEmbeddings` into a page opened by `openApp`, as `globalThis.HearthSdks`.
 */
export async function loadSdks(page: Page): Promise<void> {
  await page.evaluate(readFileSync(SDKS_BUNDLE, 'utf8'));
}

/**
 * Skips the running test outside Chromium, saying why: what it needs only Chromium offers (the
 * DevTools protocol), and the same behaviour is tested in Chromium.
 */
export function chromiumOnly(browserName: string, why: string): void {
  test.skip(browserName !== 'chromium', `Chromium only: ${why}`);
}

/**
 * Makes `client` in the page: the `openai` SDK (loaded by `openApp`) pointed at the app's
 * `v1/openai`, as a user's code would make it.
 */
export async function makeClient(page: Page, apiKey = 'sk-local'): Promise<void> {
  await page.evaluate((apiKey) => {
    globalThis.client = new OpenAI({
      baseURL: new URL('v1/openai', location.href).href,
      apiKey,
      dangerouslyAllowBrowser: true,
    });
  }, apiKey);
}

/** `GET /v1/hearth/status` from a page of the app. */
export function hostStatus(page: Page) {
  return page.evaluate(async () => {
    const response = await fetch('v1/hearth/status', { headers: { authorization: 'Bearer k' } });
    return (await response.json()) as {
      host: { id: string; build: string };
      models: string[];
      loaded_model: string | null;
      queue: { running: number; waiting: number };
      open_ports: number;
    };
  });
}

/** Headers of a JSON request with a key. */
export const KEY = { authorization: 'Bearer k', 'content-type': 'application/json' };

/** An echo prompt of `n` words (so a reply of `n` tokens). */
export const words = (n: number, word = 'w') =>
  Array.from({ length: n }, (_, i) => `${word}${i}`).join(' ');

/** SSE events `streamInPage` has read so far in `page`. */
export const streamed = (page: Page) =>
  page.evaluate(() => (globalThis as { streamed?: number }).streamed ?? 0);

/**
 * Sends a streamed chat request from the page with plain fetch, counting the events in
 * `globalThis.streamed` as they come (`streamed` reads it); resolves, once the stream ends, with
 * its status, the `data` of each event and when it came, and how long it took. The one SSE reader
 * of the browser tests' helpers.
 */
export function streamRequest(page: Page, body: Record<string, unknown>) {
  return page.evaluate(
    async ({ body, KEY }) => {
      const started = Date.now();
      const response = await fetch('v1/openai/chat/completions', {
        method: 'POST',
        headers: KEY,
        body: JSON.stringify({ ...body, stream: true }),
      });
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      const events: { data: string; at: number }[] = [];
      let buffer = '';
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buffer += value;
        const parts = buffer.split('\n\n');
        buffer = parts.pop() ?? '';
        for (const part of parts) {
          if (part.startsWith('data: ')) {
            events.push({ data: part.slice('data: '.length), at: Date.now() });
          }
        }
        (globalThis as { streamed?: number }).streamed = events.length;
      }
      return { status: response.status, events, seconds: (Date.now() - started) / 1000 };
    },
    { body, KEY },
  );
}

/**
 * Streams an echo reply in the page with plain fetch (`streamRequest`), its tokens `delayMs`
 * apart.
 */
export function streamInPage(page: Page, content: string, delayMs: number) {
  return streamRequest(page, {
    model: 'hearth/echo',
    messages: [{ role: 'user', content }],
    echo_delay_ms: delayMs,
  });
}

/** The `data` of each SSE event in `body`. */
export function sseData(body: string): string[] {
  return body
    .split('\n\n')
    .map((event) => /^data: (.*)$/m.exec(event)?.[1])
    .filter((data): data is string => data !== undefined);
}

/** Starts (or joins) a model's download from the page, and reads its progress events to the end. */
export async function downloadInPage<Progress>(page: Page, modelPath: string) {
  const { status, type, text } = await page.evaluate(
    async ({ modelPath, KEY }) => {
      const response = await fetch(`${modelPath}/download`, { method: 'POST', headers: KEY });
      const type = response.headers.get('content-type');
      return { status: response.status, type, text: await response.text() };
    },
    { modelPath, KEY },
  );
  return { status, type, events: sseData(text).map((data) => JSON.parse(data) as Progress) };
}

/** The last event of a stream, parsed. */
export const lastEvent = (events: { data: string }[]) => JSON.parse(events.at(-1)!.data) as unknown;

/** A plain non-streamed echo request from the page: its status and content. */
export function ask(page: Page, content: string) {
  return page.evaluate(
    async ({ content, KEY }) => {
      const response = await fetch('v1/openai/chat/completions', {
        method: 'POST',
        headers: KEY,
        body: JSON.stringify({ model: 'hearth/echo', messages: [{ role: 'user', content }] }),
      });
      const body = (await response.json()) as { choices?: { message: { content: string } }[] };
      return { status: response.status, content: body.choices?.[0]?.message.content };
    },
    { content, KEY },
  );
}
