/**
 * @module
 * The bench page: lives under the app's scope (so its requests reach the real service worker)
 * and offers the baselines measured in the page itself — the echo engine called directly, and
 * the same SSE bytes produced in the page for the `openai` SDK — and a line to the engine
 * worker's llama.cpp engine, called directly there.
 */
import OpenAI from 'openai';
import {
  BENCH_CHANNEL,
  type BenchCall,
  type BenchReply,
  type DirectEmbed,
  type DirectRun,
} from '../src/engine-host/bench-hook';
import { EchoEngine } from '../src/engines/echo/echo-engine';
import { SseReplyWriter, toUsage } from '../src/api/completion';
import { ECHO_MODEL } from '../src/models/models';
import { parseChatRequest } from '../src/protocol/validate';
import { loadPdfJs, pdfSections } from '../src/engine-host/documents/pdf-text';
import { chunkSections, DEFAULT_CHUNKING } from '../src/documents/chunk';

const engine = new EchoEngine();
const encoder = new TextEncoder();

/** A `fetch` for the SDK that answers chat requests in the page, as the API would, byte for byte. */
async function inPageFetch(_url: RequestInfo | URL, init?: RequestInit): Promise<Response> {
  const request = parseChatRequest(JSON.parse(String(init?.body)));
  const abort = new AbortController();
  const writer = new SseReplyWriter({
    id: 'chatcmpl-bench',
    created: Math.floor(Date.now() / 1000),
    model: request.model,
    include_usage: request.include_usage,
  });
  const outputs = engine.generate(request, abort.signal)[Symbol.asyncIterator]();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await outputs.next();
      if (done) return controller.close();
      // The echo engine emits plain tokens and an end, nothing else.
      if (value.type === 'token') controller.enqueue(encoder.encode(writer.tokens([value.text])));
      else if (value.type === 'end') {
        const usage = toUsage(value.usage, ECHO_MODEL.price);
        controller.enqueue(encoder.encode(writer.end(value.finish_reason, usage)));
      }
    },
    cancel: () => abort.abort(),
  });
  return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
}

/** Milliseconds from calling the echo engine directly to its first token. */
async function directFirstToken(content: string, delayMs: number): Promise<number> {
  const request = parseChatRequest({
    model: ECHO_MODEL.id,
    messages: [{ role: 'user', content }],
    stream: true,
    echo_delay_ms: delayMs,
  });
  const abort = new AbortController();
  const started = performance.now();
  const outputs = engine.generate(request, abort.signal)[Symbol.asyncIterator]();
  await outputs.next();
  const elapsed = performance.now() - started;
  abort.abort();
  await outputs.return?.(undefined);
  return elapsed;
}

const llamaChannel = new BroadcastChannel(BENCH_CHANNEL);
let lastCall = 0;
const calls = new Map<number, (reply: BenchReply) => void>();
llamaChannel.onmessage = ({ data }: MessageEvent<BenchCall | BenchReply>) => {
  if ('reply' in data) calls.get(data.id)?.(data);
};

/**
 * Asks the engine worker's own llama.cpp engine (src/engine-host/bench-hook.ts): a generation or
 * embeddings requests called directly, timed in the worker, or the threads of its next load.
 */
function llama(call: { type: 'threads'; threads: number }): Promise<{ threads: number }>;
function llama(call: {
  type: 'generate';
  body: unknown;
  first_only?: boolean;
  max_ms?: number;
}): Promise<DirectRun>;
function llama(call: { type: 'embed'; model: string; batches: string[][] }): Promise<DirectEmbed>;
function llama(call: Omit<BenchCall, 'id'>): Promise<unknown> {
  const id = (lastCall += 1);
  return new Promise((resolve, reject) => {
    calls.set(id, (reply) => {
      calls.delete(id);
      if ('error' in reply) reject(new Error(reply.error));
      else resolve(reply.result);
    });
    llamaChannel.postMessage({ ...call, id } as BenchCall);
  });
}

/**
 * A PDF's text read as indexing reads it (`pdfSections`, pdf.js with its worker code in this
 * thread, as in the engine worker), then cut as a store's `auto` strategy cuts it; each timed.
 * The documents bench's baseline for what reading and chunking cost of an indexing
 * (bench/documents-app.mjs). pdf.js is imported before the clock starts.
 */
async function pdfText(bytes: Uint8Array) {
  await loadPdfJs();
  const started = performance.now();
  const sections = await pdfSections(bytes, 'bench.pdf');
  const extracted = performance.now();
  const chunks = chunkSections(sections, DEFAULT_CHUNKING);
  const chunked = performance.now();
  return {
    pages: sections.length,
    chunks: chunks.length,
    extract_ms: extracted - started,
    chunk_ms: chunked - extracted,
  };
}

Object.assign(globalThis, {
  bench: { OpenAI, inPageFetch, directFirstToken, llama, pdfText },
});
