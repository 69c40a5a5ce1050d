/**
 * @module
 * src/api/responses/ is the Responses API (`/v1/openai/responses`): its request as valibot
 * schemas, its translation onto the chat-completions pipeline, its response objects and stream
 * events, and the responses kept on the device. It imports src/api's chat pipeline, src/protocol
 * and src/models, and nothing imports it but the router.
 *
 * The request body of `POST /v1/openai/responses`, as docs/api.md's Responses section lists it.
 * As for chat, unknown fields pass (SDKs send new ones) and `null` means absent. What no engine
 * here can honour is `UNSUPPORTED` (a 400 `unsupported_parameter` naming the field). Everything
 * a chat request has in common with this one is checked again, on the translated body, by the
 * chat schema: only what is this API's own is checked here.
 */
import * as v from 'valibot';
import {
  metadataSchema,
  noArray,
  UNSUPPORTED,
  unsupportedField,
  unsupportedVariant,
} from '../../protocol/schema';
import { fileSearchFields } from '../vector-stores/file-search';

const jsonObject = noArray(v.record(v.string(), v.unknown()));
const int = v.pipe(v.number(), v.integer());

const inputText = v.looseObject({ type: v.literal('input_text'), text: v.string() });
const outputText = v.looseObject({ type: v.literal('output_text'), text: v.string() });
/** An image: a data: URL or a URL of this origin (read as chat's images are); no file ids. */
const inputImage = v.looseObject({
  type: v.literal('input_image'),
  image_url: v.pipe(v.string(), v.minLength(1)),
  detail: v.nullish(v.picklist(['auto', 'low', 'high', 'original'])),
  file_id: unsupportedField,
});

/** Parts no engine here takes in any message (a document reaches the model through file_search). */
const UNSUPPORTED_PARTS = ['input_file', 'input_audio', 'refusal'] as const;

/** A user's content: text, or parts with images. */
const userContent = v.lazy((input) =>
  Array.isArray(input)
    ? v.array(
        noArray(
          v.variant('type', [
            inputText,
            outputText,
            inputImage,
            unsupportedVariant('type', UNSUPPORTED_PARTS),
          ]),
        ),
      )
    : v.string(),
);

/** Any other role's content: text parts only (OpenAI takes images from the user alone). */
const textContent = v.lazy((input) =>
  Array.isArray(input)
    ? v.array(
        noArray(
          v.variant('type', [
            inputText,
            outputText,
            unsupportedVariant('type', ['input_image', ...UNSUPPORTED_PARTS]),
          ]),
        ),
      )
    : v.string(),
);

/** A message item; its `type` may be left out, as the SDK's `EasyInputMessage` allows. */
const message = v.variant('role', [
  v.looseObject({
    type: v.nullish(v.literal('message')),
    role: v.literal('user'),
    content: userContent,
  }),
  v.looseObject({
    type: v.nullish(v.literal('message')),
    role: v.picklist(['system', 'developer', 'assistant']),
    content: textContent,
  }),
]);

const functionCall = v.looseObject({
  type: v.literal('function_call'),
  call_id: v.pipe(v.string(), v.minLength(1)),
  name: v.pipe(v.string(), v.minLength(1)),
  arguments: v.string(),
  namespace: v.nullish(v.string()),
});

/** A tool's answer: text, or parts of which text is read (images and files are refused). */
const functionCallOutput = v.looseObject({
  type: v.literal('function_call_output'),
  call_id: v.pipe(v.string(), v.minLength(1)),
  output: v.lazy((input) =>
    Array.isArray(input)
      ? v.array(
          noArray(
            v.variant('type', [
              inputText,
              unsupportedVariant('type', ['input_image', 'input_file', 'input_audio']),
            ]),
          ),
        )
      : v.string(),
  ),
});

/** A reasoning item from an earlier turn: accepted; its text does not reach the model. */
const reasoning = v.looseObject({ type: v.literal('reasoning') });

const itemReference = v.looseObject({
  type: v.literal('item_reference'),
  id: v.pipe(v.string(), v.minLength(1)),
});

/** Items of the hosted tools and others that Hearth never produces, so never gets back. */
const UNSUPPORTED_ITEMS = [
  'file_search_call',
  'computer_call',
  'computer_call_output',
  'web_search_call',
  'image_generation_call',
  'code_interpreter_call',
  'local_shell_call',
  'local_shell_call_output',
  'shell_call',
  'shell_call_output',
  'apply_patch_call',
  'apply_patch_call_output',
  'mcp_list_tools',
  'mcp_approval_request',
  'mcp_approval_response',
  'mcp_call',
  'custom_tool_call',
  'custom_tool_call_output',
  'compaction',
  'tool_search_call',
  'tool_search_output',
] as const;

/** One input item: a message (with or without `type`), or an item of another type. */
const inputItem = noArray(
  v.lazy((input) => {
    const type = (input as { type?: unknown } | null)?.type;
    if (type == null || type === 'message') return message;
    return v.variant('type', [
      functionCall,
      functionCallOutput,
      reasoning,
      itemReference,
      unsupportedVariant('type', UNSUPPORTED_ITEMS),
    ]);
  }),
);

/** Function names as chat's tools take them. */
const functionName = v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{1,64}$/));

const functionTool = v.looseObject({
  type: v.literal('function'),
  name: functionName,
  description: v.nullish(v.string()),
  parameters: v.nullish(jsonObject),
  strict: v.nullish(v.boolean()),
});

const namespaceTool = v.looseObject({
  type: v.literal('namespace'),
  name: v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{1,64}$/)),
  description: v.nullish(v.string()),
  tools: v.array(noArray(v.variant('type', [functionTool, v.looseObject({ type: v.string() })]))),
});

/**
 * Tools that run on OpenAI's servers (or the caller's machine, through OpenAI) and cannot run on
 * the device. Under `auto` the model is not offered them; forcing one is a 400. (`file_search`
 * runs on the device: `fileSearchTool`.)
 */
export const HOSTED_TOOLS = [
  'web_search',
  'web_search_preview',
  'web_search_2025_08_26',
  'web_search_preview_2025_03_11',
  'code_interpreter',
  'computer',
  'computer_use',
  'computer_use_preview',
  'image_generation',
  'mcp',
  'local_shell',
  'shell',
  'apply_patch',
  'custom',
  'tool_search',
  'programmatic_tool_calling',
] as const;

/** `file_search` runs on the device, over the vector stores kept here (docs/api.md). */
const fileSearchTool = v.looseObject({ type: v.literal('file_search'), ...fileSearchFields });

const tool = noArray(
  v.variant('type', [
    functionTool,
    namespaceTool,
    fileSearchTool,
    v.looseObject({ type: v.picklist(HOSTED_TOOLS) }),
  ]),
);

const toolChoice = v.lazy((input) =>
  typeof input === 'string'
    ? v.picklist(['none', 'auto', 'required'])
    : noArray(
        v.variant('type', [
          v.looseObject({ type: v.literal('function'), name: v.string() }),
          v.looseObject({
            type: v.literal('allowed_tools'),
            mode: v.picklist(['auto', 'required']),
            tools: v.array(noArray(v.looseObject({ type: v.string() }))),
          }),
          v.looseObject({ type: v.string() }),
        ]),
      ),
);

const format = noArray(
  v.variant('type', [
    v.looseObject({ type: v.literal('text') }),
    v.looseObject({ type: v.literal('json_object') }),
    v.looseObject({
      type: v.literal('json_schema'),
      name: v.string(),
      schema: jsonObject,
      description: v.nullish(v.string()),
      strict: v.nullish(v.boolean()),
    }),
  ]),
);

/** The request body of `POST /v1/openai/responses`. */
export const responseRequestSchema = noArray(
  v.looseObject({
    model: v.string(),
    input: v.nullish(
      v.lazy((input) =>
        typeof input === 'string' ? v.string() : v.pipe(v.array(inputItem), v.minLength(1)),
      ),
    ),
    instructions: v.nullish(v.string()),
    previous_response_id: v.nullish(v.pipe(v.string(), v.minLength(1))),
    store: v.nullish(v.boolean()),
    stream: v.nullish(v.boolean()),
    stream_options: v.nullish(
      noArray(v.looseObject({ include_obfuscation: v.nullish(v.boolean()) })),
    ),
    // OpenAI refuses fewer than 16.
    max_output_tokens: v.nullish(v.pipe(int, v.minValue(16))),
    temperature: v.nullish(v.pipe(v.number(), v.minValue(0), v.maxValue(2))),
    top_p: v.nullish(v.pipe(v.number(), v.minValue(0), v.maxValue(1))),
    tools: v.nullish(v.array(tool)),
    tool_choice: v.nullish(toolChoice),
    parallel_tool_calls: v.nullish(v.boolean()),
    text: v.nullish(
      noArray(
        v.looseObject({
          format: v.nullish(format),
          verbosity: v.nullish(v.picklist(['low', 'medium', 'high'])),
        }),
      ),
    ),
    reasoning: v.nullish(
      noArray(
        v.looseObject({
          effort: v.nullish(v.picklist(['none', 'minimal', 'low', 'medium', 'high', 'xhigh'])),
          summary: v.nullish(v.picklist(['auto', 'concise', 'detailed'])),
          generate_summary: v.nullish(v.picklist(['auto', 'concise', 'detailed'])),
        }),
      ),
    ),
    top_logprobs: v.nullish(v.pipe(int, v.minValue(0), v.maxValue(20))),
    include: v.nullish(v.array(v.string())),
    truncation: v.nullish(v.picklist(['auto', 'disabled'])),
    metadata: v.nullish(metadataSchema),
    max_tool_calls: v.nullish(v.pipe(int, v.minValue(1))),
    // Accepted and ignored: they steer OpenAI's servers, not a model.
    user: v.nullish(v.string()),
    safety_identifier: v.nullish(v.string()),
    prompt_cache_key: v.nullish(v.string()),
    service_tier: v.nullish(v.string()),
    client_metadata: v.nullish(v.unknown()),
    // What cannot be done here.
    background: v.nullish(
      v.pipe(
        v.boolean(),
        v.check((b) => !b, UNSUPPORTED),
      ),
    ),
    conversation: unsupportedField,
    prompt: unsupportedField,
  }),
);

/** The request as the schema accepts it. */
export type ParsedResponseRequest = v.InferOutput<typeof responseRequestSchema>;
/** One input item as the schema accepts it. */
export type ParsedInputItem = Extract<
  NonNullable<ParsedResponseRequest['input']>,
  unknown[]
>[number];
