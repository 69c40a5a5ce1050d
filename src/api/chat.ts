/**
 * @module
 * `POST /v1/openai/chat/completions`: the checks in docs/api.md's Order of checks, then the reply. The
 * status line waits for the first token, so that every failure before it (queue, model load,
 * prefill) gets its proper status; after it, a stream ends with one in-band error event, and a
 * non-streamed body — written only when complete — runs again on the next host if its host
 * dies, or else is cut off.
 */
import type { ChatBackend } from '../protocol/host/backend';
import {
  assertJsonContentType,
  parseJson,
  readBodyBytes,
  readJsonBody,
  tooLarge,
} from '../protocol/body';
import { hasImages, IMAGE_BODY_LIMIT, readImages } from './images';
import { ChatRun, type Output } from './chat-run';
import {
  completionBody,
  ReplyAccumulator,
  SseReplyWriter,
  toUsage,
  type ReplyMeta,
} from './completion';
import { OpenAIError } from '../protocol/errors';
import { assertCapabilities, resolveModel, type ModelInfo } from '../models/models';
import { jsonHeaders, newCompletionId, sseHeaders } from '../protocol/respond';
import { sseEvent } from '../protocol/sse';
import type { ChatRequest } from '../protocol/types';
import { parseChatRequest } from '../protocol/validate';

import type { ChatContext, ChatDeps } from './chat-deps';

/**
 * Runs a body's `file_search` (Hearth's extension, src/api/vector-stores/file-search.ts), given
 * by the router so that chat does not import the vector stores: the bodies with the passages,
 * and what was found; undefined for a body without the field.
 */
export type ChatFileSearch = (
  body: Record<string, unknown>,
  requestId: string,
) => Promise<
  { checked: Record<string, unknown>; sent: Record<string, unknown>; reported: unknown } | undefined
>;

export type { ChatContext, ChatDeps } from './chat-deps';

const encoder = new TextEncoder();

function sseBody(run: ChatRun, first: Output, meta: ReplyMeta, model: ModelInfo) {
  const writer = new SseReplyWriter(meta);
  /** Writes one output; the end closes the stream. */
  const write = (controller: ReadableStreamDefaultController<Uint8Array>, output: Output) => {
    switch (output.type) {
      case 'tokens':
        controller.enqueue(writer.tokenBytes(output.tokens));
        return;
      case 'tool_calls':
        controller.enqueue(encoder.encode(writer.toolCalls(output.calls)));
        return;
      case 'started':
        // The engine works on a reply it has not begun to release (a long prompt's prefill, tool
        // calls that go out whole): the response starts, its first chunk comes with the reply.
        return;
      case 'choices':
      case 'embeddings':
        // Several choices are never streamed (the capability check refuses `n` > 1 with `stream`).
        throw new OpenAIError('engine_error', 'The engine sent several choices to a stream.');
      case 'end': {
        const usage = toUsage(output.usage, model.price);
        controller.enqueue(
          encoder.encode(writer.end(output.finish_reason, usage, output.usage?.speed)),
        );
        controller.close();
      }
    }
  };
  return new ReadableStream<Uint8Array>({
    // The first token is in the body before the response leaves: no extra hop to read it.
    start(controller) {
      try {
        write(controller, first);
      } catch (err) {
        controller.enqueue(encoder.encode(sseEvent(OpenAIError.from(err).toBody())));
        controller.close();
      }
    },
    async pull(controller) {
      try {
        write(controller, await run.next());
      } catch (err) {
        if (run.cancelled) return; // the client cancelled: nobody is reading any more
        controller.enqueue(encoder.encode(sseEvent(OpenAIError.from(err).toBody())));
        controller.close();
      }
    },
    cancel() {
      run.cancel();
    },
  });
}

/** The end of a reply. */
export type EndOutput = Extract<Output, { type: 'end' }>;

/**
 * Reads a non-streamed reply to its end, giving each output to the reader `fresh` makes; when
 * its host dies after the status line, it runs again from the start on the next host, once, with
 * a fresh reader, or `restart` throws (docs/api.md, Errors: a request whose tab closed).
 */
export async function readWhole(
  run: ChatRun,
  first: Output,
  fresh: () => (output: Output) => void,
): Promise<EndOutput> {
  let output = first;
  let take = fresh();
  for (;;) {
    try {
      while (output.type !== 'end') {
        if (output.type === 'embeddings') {
          throw new OpenAIError('engine_error', 'The engine answered a chat with embeddings.');
        }
        take(output);
        output = await run.next();
      }
      return output;
    } catch (err) {
      output = await run.restart(err);
      take = fresh();
    }
  }
}

function jsonBody(run: ChatRun, first: Output, meta: ReplyMeta, model: ModelInfo) {
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let reply = new ReplyAccumulator();
      let end: EndOutput;
      try {
        end = await readWhole(run, first, () => {
          reply = new ReplyAccumulator();
          return (output) => {
            if (output.type === 'tokens') reply.tokens(output.tokens);
            else if (output.type === 'tool_calls') reply.toolCalls(output.calls);
            else if (output.type === 'choices') reply.choices(output.choices);
          };
        });
      } catch (err) {
        if (run.cancelled) return; // the client cancelled: nobody is reading any more
        // The status line is out: all that is left is to cut the body off.
        controller.error(OpenAIError.from(err));
        return;
      }
      const usage = toUsage(end.usage, model.price);
      const body = completionBody(meta, reply.result(end.finish_reason), usage);
      controller.enqueue(encoder.encode(JSON.stringify(body)));
      controller.close();
    },
    cancel() {
      run.cancel();
    },
  });
}

/**
 * The body as JSON. One with images may be up to `imageBodyLimit`; any other over `bodyLimit` is
 * a 413 before it is parsed any further, as it always was (docs/api.md, Order of checks: 413
 * before 400). `mayHaveImages` says whether a parsed body names an image part anywhere.
 */
export async function readBodyWithImages(
  request: Request,
  deps: ChatDeps,
  mayHaveImages: (body: unknown) => boolean,
): Promise<Record<string, unknown>> {
  const limit = Math.max(deps.bodyLimit, deps.imageBodyLimit ?? IMAGE_BODY_LIMIT);
  if (limit === deps.bodyLimit) {
    return (await readJsonBody(request, limit)) as Record<string, unknown>;
  }
  const bytes = await readBodyBytes(request, limit);
  if (bytes.byteLength <= deps.bodyLimit) return parseJson(bytes) as Record<string, unknown>;
  let value: unknown;
  try {
    value = parseJson(bytes);
  } catch {
    // Not JSON, so no images: over the usual limit, that is what is wrong with it first.
    throw tooLarge(deps.bodyLimit);
  }
  if (!mayHaveImages(value)) throw tooLarge(deps.bodyLimit);
  return value as Record<string, unknown>;
}

/** Whether some item of `list` has a content part of type `type` (before any validation). */
export function hasPartOfType(list: unknown, type: string): boolean {
  return (
    Array.isArray(list) &&
    list.some((m: unknown) => {
      const content = (m as { content?: unknown } | null)?.content;
      return (
        Array.isArray(content) &&
        content.some((p: unknown) => (p as { type?: unknown } | null)?.type === type)
      );
    })
  );
}

/** A chat body the pipeline accepted: the request, its model and the backend that answers. */
export interface AcceptedChat {
  chat: ChatRequest;
  model: ModelInfo;
  backend: ChatBackend;
}

/**
 * Validates a chat body up to the point where the engine is asked (every 4xx but 429): the
 * schema, the model, its capabilities, its readiness, and the images read. The Responses API
 * sends its translated body through here too.
 */
export async function acceptChatBody(
  body: Record<string, unknown>,
  deps: ChatDeps,
  origin: string,
): Promise<AcceptedChat> {
  const chat = parseChatRequest(body);
  // One lookup answers which model, which backend and whether it can answer now.
  const resolved = await resolveModel(deps.models, chat.model);
  assertCapabilities(chat, resolved.model);
  await resolved.ready();
  // A server's model gets the body as it came, image URLs and all: its images are its own.
  if (!resolved.model.remote && hasImages(chat)) {
    await readImages(chat, { origin, ...deps.images });
  }
  return { chat, model: resolved.model, backend: resolved.backend ?? deps.backend };
}

/** The run of an accepted request, with the endpoint's limits. */
export function startRun(
  { chat, backend }: AcceptedChat,
  body: Record<string, unknown>,
  deps: ChatDeps,
  context: ChatContext,
): ChatRun {
  return new ChatRun((options) => backend.chat(chat, { ...options, body }), {
    requestId: context.requestId,
    alive: context.alive,
    firstTokenTimeoutMs: deps.firstTokenTimeoutMs,
    stallTimeoutMs: deps.stallTimeoutMs,
  });
}

/** The endpoint: the response starts at the first token. */
export async function handleChatCompletions(
  request: Request,
  deps: ChatDeps,
  context: ChatContext,
  fileSearch?: ChatFileSearch,
): Promise<Response> {
  assertJsonContentType(request);
  // A body with images may be larger (they come as data URLs); without, the limit is the usual.
  const body = await readBodyWithImages(request, deps, (value) =>
    hasPartOfType((value as { messages?: unknown } | null)?.messages, 'image_url'),
  );
  // Hearth's `file_search`: the passages join the conversation (docs/api.md, file_search).
  const search = await fileSearch?.(body, context.requestId);
  const accepted = await acceptChatBody(search?.checked ?? body, deps, new URL(request.url).origin);
  const { chat, model } = accepted;
  const run = startRun(accepted, search?.sent ?? body, deps, context);
  const first = await run.first();
  const meta: ReplyMeta = {
    id: newCompletionId(),
    created: Math.floor(Date.now() / 1000),
    model: model.id,
    include_usage: chat.include_usage,
    logprobs: chat.logprobs === true,
    ...(search && { extra: { file_search: search.reported } }),
  };
  if (!chat.stream) {
    return new Response(jsonBody(run, first, meta, model), {
      headers: jsonHeaders(context.requestId),
    });
  }
  return new Response(sseBody(run, first, meta, model), {
    headers: sseHeaders(context.requestId),
  });
}
