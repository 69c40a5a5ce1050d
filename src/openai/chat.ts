/**
 * @module
 * `POST /v1/openai/chat/completions`: the checks in DESIGN §3's order, then the reply. The
 * status line waits for the first token, so that every failure before it (queue, model load,
 * prefill) gets its proper status; after it, a stream ends with one in-band error event and a
 * non-streamed body is cut off.
 */
import type { ChatBackend, ChatEvent, ChatState } from './backend';
import { assertJsonContentType, readJsonBody } from './body';
import { completionBody, SseReplyWriter, toUsage, type ReplyMeta } from './completion';
import { OpenAIError } from './errors';
import { assertCapabilities, type ModelDirectory, type ModelInfo } from './models';
import { jsonHeaders, newCompletionId } from './respond';
import { sseEvent } from './sse';
import type { ChatRequest } from './types';
import { parseChatRequest } from './validate';

/** What the endpoint needs. */
export interface ChatDeps {
  backend: ChatBackend;
  models: ModelDirectory;
  /** Longest wait for the first token before a 503 (DESIGN §3: 4 minutes). */
  firstTokenTimeoutMs: number;
  /** Largest body in bytes. */
  bodyLimit: number;
}

/** Seconds a client should wait before retrying a request that found the engine busy. */
const BUSY_RETRY_AFTER_S = 10;
/** Seconds a client should wait before retrying while a model loads. */
const LOADING_RETRY_AFTER_S = 30;

type Events = AsyncIterator<ChatEvent>;
type Output = Exclude<ChatEvent, { type: 'state' }>;

function endedEarly(): OpenAIError {
  return new OpenAIError('engine_error', 'The engine ended the request without a reply.');
}

function timedOut(state: ChatState, ms: number): OpenAIError {
  const seconds = Math.round(ms / 1000);
  return state === 'loading'
    ? new OpenAIError(
        'model_loading',
        `The model is still loading after ${seconds} s; it keeps loading, try again shortly.`,
        { retryAfter: LOADING_RETRY_AFTER_S },
      )
    : new OpenAIError(
        'engine_busy',
        `The engine could not start this request within ${seconds} s; try again later.`,
        { retryAfter: BUSY_RETRY_AFTER_S },
      );
}

/** The first token batch (or the end of an empty reply), within the deadline. */
async function firstOutput(events: Events, timeoutMs: number): Promise<Output> {
  let state: ChatState = 'queued';
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timedOut(state, timeoutMs)), timeoutMs);
  });
  try {
    for (;;) {
      const next = events.next();
      // The losing `next()` settles once the request is cancelled; nobody waits for it then.
      next.catch(() => undefined);
      const result = await Promise.race([next, deadline]);
      if (result.done) throw endedEarly();
      if (result.value.type !== 'state') return result.value;
      state = result.value.state;
    }
  } finally {
    clearTimeout(timer);
  }
}

/** The next token batch or end; state events after the first token carry nothing new. */
async function nextOutput(events: Events): Promise<Output> {
  for (;;) {
    const result = await events.next();
    if (result.done) throw endedEarly();
    if (result.value.type !== 'state') return result.value;
  }
}

const encoder = new TextEncoder();

function sseBody(
  events: Events,
  first: Output,
  meta: ReplyMeta,
  model: ModelInfo,
  abort: AbortController,
) {
  const writer = new SseReplyWriter(meta);
  let pending: Output | undefined = first;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const output = pending ?? (await nextOutput(events));
        pending = undefined;
        if (output.type === 'tokens') {
          controller.enqueue(encoder.encode(writer.tokens(output.tokens)));
          return;
        }
        const usage = toUsage(output.usage, model.price);
        controller.enqueue(encoder.encode(writer.end(output.finish_reason, usage)));
      } catch (err) {
        if (abort.signal.aborted) return; // the client cancelled: nobody is reading any more
        controller.enqueue(encoder.encode(sseEvent(OpenAIError.from(err).toBody())));
      }
      controller.close();
    },
    cancel() {
      abort.abort();
    },
  });
}

function jsonBody(
  events: Events,
  first: Output,
  meta: ReplyMeta,
  model: ModelInfo,
  abort: AbortController,
) {
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let content = '';
      try {
        let output = first;
        while (output.type === 'tokens') {
          content += output.tokens.join('');
          output = await nextOutput(events);
        }
        const usage = toUsage(output.usage, model.price);
        const body = completionBody(meta, content, output.finish_reason, usage);
        controller.enqueue(encoder.encode(JSON.stringify(body)));
        controller.close();
      } catch (err) {
        if (abort.signal.aborted) return; // the client cancelled: nobody is reading any more
        // The status line is out: all that is left is to cut the body off (DESIGN §3).
        controller.error(OpenAIError.from(err));
      }
    },
    cancel() {
      abort.abort();
    },
  });
}

/** Validates a request up to the point where the engine is asked (every 4xx but 429). */
export async function acceptChatRequest(
  request: Request,
  deps: ChatDeps,
): Promise<{ chat: ChatRequest; model: ModelInfo }> {
  assertJsonContentType(request);
  const chat = parseChatRequest(await readJsonBody(request, deps.bodyLimit));
  const model = await deps.models.find(chat.model);
  if (!model) {
    throw new OpenAIError('model_not_found', `The model '${chat.model}' does not exist.`, {
      param: 'model',
    });
  }
  assertCapabilities(chat, model);
  await deps.models.ensureReady(model);
  return { chat, model };
}

/** The endpoint: the response starts at the first token. */
export async function handleChatCompletions(
  request: Request,
  deps: ChatDeps,
  requestId: string,
): Promise<Response> {
  const { chat, model } = await acceptChatRequest(request, deps);
  const abort = new AbortController();
  const events = deps.backend.chat(chat, { signal: abort.signal })[Symbol.asyncIterator]();
  let first: Output;
  try {
    first = await firstOutput(events, deps.firstTokenTimeoutMs);
  } catch (err) {
    abort.abort();
    throw err;
  }
  const meta: ReplyMeta = {
    id: newCompletionId(),
    created: Math.floor(Date.now() / 1000),
    model: model.id,
    include_usage: chat.include_usage,
  };
  if (!chat.stream) {
    return new Response(jsonBody(events, first, meta, model, abort), {
      headers: jsonHeaders(requestId),
    });
  }
  const headers = new Headers({
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'x-accel-buffering': 'no',
    'x-request-id': requestId,
  });
  return new Response(sseBody(events, first, meta, model, abort), { headers });
}
