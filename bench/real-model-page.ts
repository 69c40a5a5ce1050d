/**
 * @module
 * The baseline of `npm run bench:real-model`: WebLLM called directly in the page, with the same
 * model record, prompt and settings the API gets.
 */
import { CreateMLCEngine, type MLCEngine, type ModelRecord } from '@mlc-ai/web-llm';

let engine: MLCEngine | undefined;

/** Loads the model straight into WebLLM, as an app without Hearth would. */
async function load(record: ModelRecord): Promise<void> {
  engine = await CreateMLCEngine(record.model_id, { appConfig: { model_list: [record] } });
}

/** Time to first token and decode speed of one streamed reply. */
async function run(prompt: string, maxTokens: number) {
  if (!engine) throw new Error('load the model first');
  const started = performance.now();
  const stream = await engine.chat.completions.create({
    messages: [{ role: 'user', content: prompt }],
    max_tokens: maxTokens,
    temperature: 0,
    stream: true,
    stream_options: { include_usage: true },
  });
  let first: number | undefined;
  let last = started;
  let tokens = 0;
  for await (const chunk of stream) {
    if (chunk.choices[0]?.delta.content) {
      first ??= performance.now();
      last = performance.now();
    }
    if (chunk.usage) tokens = chunk.usage.completion_tokens;
  }
  // A fresh conversation each time, as through the API (no KV reuse across runs).
  await engine.resetChat();
  return {
    ttftMs: (first ?? last) - started,
    decodeSeconds: (last - (first ?? last)) / 1000,
    tokens,
  };
}

Object.assign(globalThis, { direct: { load, run } });
