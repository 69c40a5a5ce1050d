// `npm run bench:real-model`: decode speed and time to first token of a real model through the
// API, against WebLLM called directly in a page of the same browser. Needs a GPU and the model's
// files (from the network, or HEARTH_MODEL_DIR); says why and stops where there are none.
import { mkdirSync, writeFileSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { preview } from 'vite';
import { browserHelp, CHROMIUM_ARGS, findChromium } from '../scripts/browsers.mjs';
import {
  buildForRealModel,
  filesUnreachable,
  modelFiles,
  realModel,
} from '../scripts/real-model.mjs';

const PORT = Number(process.env.BENCH_PORT ?? 4191);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const MAX_TOKENS = 128;
const PROMPT = 'Explain, in a few paragraphs, how a rainbow forms.';
const extra = (process.env.HEARTH_CHROMIUM_ARGS ?? '').split(/\s+/).filter(Boolean);

/** @param {number[]} xs */
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? NaN;
/** @param {number} x */
const round = (x) => Number(x.toFixed(2));

const executablePath = await findChromium();
if (!executablePath) throw new Error(browserHelp('chromium'));
const model = await realModel();
const unreachable = await filesUnreachable(model);
if (unreachable) {
  console.log(`bench:real-model skipped: ${unreachable}`);
  process.exit(0);
}
await buildForRealModel(model, 'dist-bench-real', { HEARTH_BENCH: '1', PORT: String(PORT) });
const server = await preview({ logLevel: 'warn', plugins: [modelFiles(model)] });
const origin = `http://127.0.0.1:${PORT}`;
const browser = await chromium.launch({
  executablePath,
  args: [...CHROMIUM_ARGS, '--enable-unsafe-webgpu', ...extra],
});
try {
  const app = await browser.newPage();
  await app.goto(`${origin}/`);
  await app.waitForSelector('api-status[state="ready"]');
  const adapter = await app.evaluate(async () => {
    const found = /** @type {any} */ (await /** @type {any} */ (navigator).gpu?.requestAdapter());
    return found
      ? { fallback: found.info?.isFallbackAdapter ?? found.isFallbackAdapter ?? false }
      : null;
  });
  if (!adapter || adapter.fallback) {
    console.log(
      `bench:real-model skipped: ${adapter ? 'only a fallback (CPU) WebGPU adapter' : 'no WebGPU adapter'}`,
    );
  } else {
    console.error(`bench: loading ${model.id} through the API (the first time downloads it)`);
    const loaded = await app.evaluate(async (id) => {
      const response = await fetch(`v1/hearth/models/${encodeURIComponent(id)}/load`, {
        method: 'POST',
        headers: { authorization: 'Bearer bench' },
      });
      return { status: response.status, text: await response.text() };
    }, model.id);
    if (loaded.status !== 200) throw new Error(`the load failed: ${loaded.text}`);

    console.error(`bench: ${RUNS} replies of up to ${MAX_TOKENS} tokens through the API`);
    const viaApi = [];
    for (let r = 0; r < RUNS; r += 1) {
      viaApi.push(
        await app.evaluate(
          async ({ id, prompt, maxTokens }) => {
            const started = performance.now();
            const response = await fetch('v1/openai/chat/completions', {
              method: 'POST',
              headers: { authorization: 'Bearer bench', 'content-type': 'application/json' },
              body: JSON.stringify({
                model: id,
                messages: [{ role: 'user', content: prompt }],
                max_tokens: maxTokens,
                temperature: 0,
                stream: true,
                stream_options: { include_usage: true },
              }),
            });
            const reader = /** @type {ReadableStream<Uint8Array>} */ (response.body)
              .pipeThrough(new TextDecoderStream())
              .getReader();
            let first;
            let last = started;
            let tokens = 0;
            let buffer = '';
            for (;;) {
              const { done, value } = await reader.read();
              if (done) break;
              buffer += value;
              const events = buffer.split('\n\n');
              buffer = events.pop() ?? '';
              for (const event of events) {
                if (!event.startsWith('data: {')) continue;
                const chunk = JSON.parse(event.slice(6));
                if (chunk.choices?.[0]?.delta?.content) {
                  first ??= performance.now();
                  last = performance.now();
                }
                if (chunk.usage) tokens = chunk.usage.completion_tokens;
              }
            }
            return {
              ttftMs: (first ?? last) - started,
              decodeSeconds: (last - (first ?? last)) / 1000,
              tokens,
            };
          },
          { id: model.id, prompt: PROMPT, maxTokens: MAX_TOKENS },
        ),
      );
    }

    console.error('bench: the same, with WebLLM called directly in a page');
    const page = await browser.newPage();
    await page.goto(`${origin}/bench/real-model.html`);
    await page.waitForFunction(() => 'direct' in globalThis);
    const record = { ...model.record };
    if (model.catalogue) {
      record.model = `${origin}/models/${model.record.model_id}/resolve/main/`;
      record.model_lib = `${origin}/models/${model.record.model_lib.split('/').at(-1)}`;
    }
    await page.evaluate((r) => /** @type {any} */ (globalThis).direct.load(r), record);
    const direct = [];
    for (let r = 0; r < RUNS; r += 1) {
      direct.push(
        await page.evaluate(
          ({ prompt, maxTokens }) => /** @type {any} */ (globalThis).direct.run(prompt, maxTokens),
          { prompt: PROMPT, maxTokens: MAX_TOKENS },
        ),
      );
    }

    /** @param {{ decodeSeconds: number; tokens: number }[]} runs */
    const decode = (runs) => median(runs.map((r) => (r.tokens - 1) / r.decodeSeconds));
    const results = {
      ttft_api_ms: round(median(viaApi.map((r) => r.ttftMs))),
      ttft_direct_ms: round(median(direct.map((r) => r.ttftMs))),
      decode_tps_api: round(decode(viaApi)),
      decode_tps_direct: round(decode(direct)),
    };
    const report = {
      ...results,
      ttft_added_ms: round(results.ttft_api_ms - results.ttft_direct_ms),
      decode_ratio_vs_direct: round(results.decode_tps_api / results.decode_tps_direct),
    };
    console.log(`\n${model.id}, ${RUNS} runs each, up to ${MAX_TOKENS} tokens`);
    for (const [key, value] of Object.entries(report)) console.log(`${key.padEnd(24)} ${value}`);
    mkdirSync('bench/results', { recursive: true });
    const file = 'bench/results/real-model.json';
    writeFileSync(
      file,
      `${JSON.stringify({ date: new Date().toISOString(), model: model.id, chromium: browser.version(), ...report }, null, 2)}\n`,
    );
    console.log(`\nwrote ${file}`);
  }
} finally {
  await browser.close();
  await new Promise((resolve) => server.httpServer.close(resolve));
}
