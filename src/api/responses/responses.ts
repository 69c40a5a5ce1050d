/**
 * @module
 * The Responses API's endpoints: `POST /responses` runs the request through the chat pipeline
 * (`translate.ts`, then chat's acceptance, run and limits, as chat's own requests go) and writes
 * the response (`output.ts`), keeping it on the device when asked (`store.ts`; what reads the
 * kept responses back is `kept.ts`).
 */
import * as v from 'valibot';
import { assertJsonContentType } from '../../protocol/body';
import {
  acceptChatBody,
  hasPartOfType,
  readBodyWithImages,
  readWhole,
  startRun,
  type AcceptedChat,
  type ChatContext,
} from '../chat';
import type { ChatRun, Output } from '../chat-run';
import { OpenAIError } from '../../protocol/errors';
import { jsonHeaders, sseHeaders } from '../../protocol/respond';
import { issueToError } from '../../protocol/validate';
import { conversation, dropOldestTurn, fileSearch, keep, type ResponsesDeps } from './conversation';
import { ResponseWriter } from './output';
import { responseRequestSchema, type ParsedResponseRequest } from './schema';
import {
  inResponsesTerms,
  newItemId,
  translate,
  type PlacedItem,
  type Translation,
} from './translate';
import type { ResponseObject } from './types';

const encoder = new TextEncoder();

/** The response as created: in progress, no output, the request's settings echoed. */
function created(parsed: ParsedResponseRequest, model: string): ResponseObject {
  return {
    id: newItemId('resp'),
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status: 'in_progress',
    completed_at: null,
    error: null,
    incomplete_details: null,
    instructions: parsed.instructions ?? null,
    model,
    output: [],
    parallel_tool_calls: parsed.parallel_tool_calls ?? true,
    previous_response_id: parsed.previous_response_id ?? null,
    reasoning: {
      effort: parsed.reasoning?.effort ?? null,
      summary: parsed.reasoning?.summary ?? null,
    },
    store: parsed.store ?? true,
    temperature: parsed.temperature ?? 1,
    text: { format: parsed.text?.format ?? { type: 'text' } },
    tool_choice: parsed.tool_choice ?? 'auto',
    tools: parsed.tools ?? [],
    top_p: parsed.top_p ?? 1,
    top_logprobs: parsed.top_logprobs ?? 0,
    truncation: parsed.truncation ?? 'disabled',
    max_output_tokens: parsed.max_output_tokens ?? null,
    metadata: parsed.metadata ?? {},
    background: false,
    user: parsed.user ?? null,
    usage: null,
  };
}

interface Started {
  translation: Translation;
  accepted: AcceptedChat;
  run: ChatRun;
  first: Output;
}

/** Translates, accepts and starts the request, dropping the oldest turns under `truncation: auto`. */
async function start(
  parsed: ParsedResponseRequest,
  placed: PlacedItem[],
  deps: ResponsesDeps,
  context: ChatContext,
  origin: string,
): Promise<Started> {
  for (;;) {
    const translation = translate(parsed, placed);
    try {
      const accepted = await acceptChatBody(translation.body, deps, origin);
      const run = startRun(accepted, translation.body, deps, context);
      const first = await run.first();
      return { translation, accepted, run, first };
    } catch (err) {
      const fewer =
        parsed.truncation === 'auto' &&
        err instanceof OpenAIError &&
        err.code === 'context_length_exceeded'
          ? dropOldestTurn(placed)
          : null;
      if (!fewer) throw inResponsesTerms(err, translation);
      placed = fewer;
    }
  }
}

export type { ResponsesDeps } from './conversation';

/** `POST /v1/openai/responses`. */
export async function createResponse(
  request: Request,
  deps: ResponsesDeps,
  context: ChatContext,
): Promise<Response> {
  assertJsonContentType(request);
  const body = await readBodyWithImages(request, deps, (value) =>
    hasPartOfType((value as { input?: unknown } | null)?.input, 'input_image'),
  );
  const result = v.safeParse(responseRequestSchema, body, { abortEarly: true });
  if (!result.success) throw issueToError(result.issues[0]);
  const parsed = result.output;
  const { context: earlier, input } = await conversation(parsed, deps.store);
  const placed: PlacedItem[] = [
    ...earlier.map((item) => ({ item, param: 'previous_response_id' })),
    ...input.map((item, i) => ({ item, param: `input[${i}]` })),
  ];
  const search = await fileSearch(parsed, placed, deps, context);
  if (search) placed.unshift({ item: search.context, param: search.param });
  const origin = new URL(request.url).origin;
  const { translation, accepted, run, first } = await start(parsed, placed, deps, context, origin);
  const stream = parsed.stream === true;
  const response = created(parsed, accepted.model.id);
  const newWriter = () =>
    new ResponseWriter(structuredClone(response), {
      sse: stream,
      names: translation.names,
      logprobs: accepted.chat.logprobs === true,
      passages: search?.run.results ?? [],
    });
  // The search ran before the model: its item leads the output, its events the stream.
  const withSearch = () => {
    const writer = newWriter();
    const events = search ? writer.fileSearch(search.run.queries, search.reported) : '';
    return { writer, events };
  };
  const finish: Finish = async (writer, end, send) => {
    const [closing, last] = writer.endParts(end.finish_reason, end.usage, accepted.model.price);
    // The items' last events (each carrying the whole text) travel while the response is kept;
    // the response's own last event waits for it, so that a client may name it at once
    // (`previous_response_id`).
    send(closing);
    if (writer.response.store) await keep(deps.store, writer.response, input, earlier);
    send(last);
  };
  if (!stream) {
    return new Response(
      jsonBody(run, first, () => withSearch().writer, finish),
      {
        headers: jsonHeaders(context.requestId),
      },
    );
  }
  const { writer, events } = withSearch();
  return new Response(sseBody(run, first, writer, finish, events), {
    headers: sseHeaders(context.requestId),
  });
}

/** Ends the response: its last events, given to `send` (nothing in a JSON body), and keeping it. */
type Finish = (
  writer: ResponseWriter,
  end: Extract<Output, { type: 'end' }>,
  send: (events: string) => void,
) => Promise<void>;

/** The events of one output; true at the end. */
async function write(
  controller: ReadableStreamDefaultController<Uint8Array>,
  writer: ResponseWriter,
  output: Output,
  finish: Finish,
): Promise<boolean> {
  switch (output.type) {
    case 'tokens':
      controller.enqueue(writer.tokenBytes(output.tokens));
      return false;
    case 'tool_calls':
      controller.enqueue(encoder.encode(writer.toolCalls(output.calls)));
      return false;
    case 'started':
      return false;
    case 'choices':
    case 'embeddings':
      throw new OpenAIError('engine_error', 'The engine sent several choices to a response.');
    case 'end':
      await finish(writer, output, (events) => {
        if (events) controller.enqueue(encoder.encode(events));
      });
      controller.close();
      return true;
  }
}

function sseBody(
  run: ChatRun,
  first: Output,
  writer: ResponseWriter,
  finish: Finish,
  searchEvents: string,
) {
  const failed = (controller: ReadableStreamDefaultController<Uint8Array>, err: unknown) => {
    const error = OpenAIError.from(err);
    controller.enqueue(encoder.encode(writer.fail({ code: error.code, message: error.message })));
    controller.close();
  };
  return new ReadableStream<Uint8Array>({
    // The first events are in the body before the response leaves.
    async start(controller) {
      controller.enqueue(encoder.encode(writer.start() + searchEvents));
      try {
        await write(controller, writer, first, finish);
      } catch (err) {
        failed(controller, err);
      }
    },
    async pull(controller) {
      try {
        await write(controller, writer, await run.next(), finish);
      } catch (err) {
        if (run.cancelled) return; // the client cancelled: nobody is reading any more
        failed(controller, err);
      }
    },
    cancel() {
      run.cancel();
    },
  });
}

function jsonBody(run: ChatRun, first: Output, newWriter: () => ResponseWriter, finish: Finish) {
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let writer = newWriter();
      try {
        const end = await readWhole(run, first, () => {
          // A rerun on the next host starts the output afresh.
          writer = newWriter();
          return (output) => {
            if (output.type === 'tokens') writer.tokens(output.tokens);
            else if (output.type === 'tool_calls') writer.toolCalls(output.calls);
            else if (output.type === 'choices') {
              throw new OpenAIError(
                'engine_error',
                'The engine sent several choices to a response.',
              );
            }
          };
        });
        await finish(writer, end, () => {});
      } catch (err) {
        if (run.cancelled) return; // the client cancelled: nobody is reading any more
        // The status line is out: all that is left is to cut the body off.
        controller.error(OpenAIError.from(err));
        return;
      }
      controller.enqueue(encoder.encode(JSON.stringify(writer.response)));
      controller.close();
    },
    cancel() {
      run.cancel();
    },
  });
}
