/**
 * @module
 * The chat-completions request as valibot schemas: docs/api.md's Request fields. Unknown fields pass
 * (SDKs send new ones); `null` means absent, as the OpenAI SDK types allow it everywhere.
 * Fields Hearth cannot honour for any engine fail with the `UNSUPPORTED` message, which
 * `validate.ts` turns into 400 `unsupported_parameter`.
 */
import * as v from 'valibot';

/** Issue message that marks a field or value no engine here can honour. */
export const UNSUPPORTED = 'unsupported_parameter';

/** Any value present fails as unsupported; null and absent pass. */
export const unsupportedField = v.nullish(v.never(UNSUPPORTED));

/** Fails as unsupported, whatever the value. */
const unsupportedValue = v.pipe(
  v.unknown(),
  v.check(() => false, UNSUPPORTED),
);

/** An object whose discriminator names something unsupported; the issue points at the key. */
export function unsupportedVariant<
  K extends string,
  const V extends readonly [string, ...string[]],
>(key: K, values: V) {
  return v.pipe(
    v.looseObject({ [key]: v.picklist(values) } as Record<K, v.PicklistSchema<V, undefined>>),
    v.forward(
      v.check(() => false, UNSUPPORTED),
      [key] as never,
    ),
  );
}

// valibot's object schemas take arrays too (they are objects); JSON arrays where the API wants
// an object must fail as the wrong type, not be read as `{"0": …}`.
const notAnObject = v.custom<never>(() => false);

/** `schema`, but an array fails as `invalid_type`. */
export function noArray<S extends v.GenericSchema>(schema: S) {
  return v.lazy((input) => (Array.isArray(input) ? notAnObject : schema));
}

/** A JSON object with any keys (tool parameters, JSON schemas). */
const jsonObject = noArray(v.record(v.string(), v.unknown()));

const int = v.pipe(v.number(), v.integer());

/** OpenAI's `metadata`: up to 16 string pairs, keys up to 64 characters, values up to 512. */
export const metadataSchema = v.pipe(
  noArray(v.record(v.pipe(v.string(), v.maxLength(64)), v.pipe(v.string(), v.maxLength(512)))),
  v.check((m) => Object.keys(m).length <= 16, 'at most 16 keys.'),
);
const nonEmptyString = v.pipe(v.string(), v.minLength(1));

const textPart = v.looseObject({ type: v.literal('text'), text: v.string() });

/** OpenAI's image part: `url` a `data:` URL or a URL (which `api/images.ts` reads or refuses). */
const imagePart = v.looseObject({
  type: v.literal('image_url'),
  image_url: noArray(
    v.looseObject({
      url: nonEmptyString,
      detail: v.nullish(v.picklist(['auto', 'low', 'high'])),
    }),
  ),
});

/** Parts OpenAI defines that Hearth does not take in any role (any other type is a wrong
 * value). */
const unsupportedParts = ['input_audio', 'file', 'refusal'] as const;

/** Content of a system, assistant or tool message: a string or text parts (OpenAI takes images
 * only from the user). */
const content = v.lazy((input) =>
  Array.isArray(input)
    ? v.array(
        noArray(
          v.variant('type', [
            textPart,
            unsupportedVariant('type', ['image_url', ...unsupportedParts]),
          ]),
        ),
      )
    : v.string(),
);

/** Content of a user message: a string, or text and image parts. */
const userContent = v.lazy((input) =>
  Array.isArray(input)
    ? v.array(
        noArray(
          v.variant('type', [textPart, imagePart, unsupportedVariant('type', unsupportedParts)]),
        ),
      )
    : v.string(),
);

const toolCall = noArray(
  v.looseObject({
    id: v.string(),
    type: v.literal('function'),
    function: noArray(v.looseObject({ name: v.string(), arguments: v.string() })),
  }),
);

const name = v.nullish(v.string());

const systemMessage = v.looseObject({
  role: v.picklist(['system', 'developer']),
  content,
  name,
});

const userMessage = v.looseObject({ role: v.literal('user'), content: userContent, name });

const assistantMessage = v.pipe(
  v.looseObject({
    role: v.literal('assistant'),
    content: v.nullish(content),
    tool_calls: v.nullish(v.array(toolCall)),
    name,
    refusal: v.nullish(v.string()),
    audio: unsupportedField,
    function_call: unsupportedField,
  }),
  v.forward(
    v.check(
      (m) => m.content != null || (m.tool_calls?.length ?? 0) > 0,
      'An assistant message needs `content` or `tool_calls`.',
    ),
    ['content'],
  ),
);

const toolMessage = v.looseObject({
  role: v.literal('tool'),
  content,
  tool_call_id: v.string(),
});

const message = noArray(
  v.variant('role', [
    systemMessage,
    userMessage,
    assistantMessage,
    toolMessage,
    // The deprecated `function` role predates tools; no engine here speaks it.
    unsupportedVariant('role', ['function']),
  ]),
);

const functionTool = noArray(
  v.variant('type', [
    v.looseObject({
      type: v.literal('function'),
      function: noArray(
        v.looseObject({
          name: v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{1,64}$/)),
          description: v.nullish(v.string()),
          parameters: v.nullish(jsonObject),
          strict: v.nullish(v.boolean()),
        }),
      ),
    }),
    unsupportedVariant('type', ['custom']),
  ]),
);

const toolChoice = v.lazy((input) =>
  typeof input === 'string'
    ? v.picklist(['none', 'auto', 'required'])
    : noArray(
        v.variant('type', [
          v.looseObject({
            type: v.literal('function'),
            function: noArray(v.looseObject({ name: v.string() })),
          }),
          unsupportedVariant('type', ['allowed_tools', 'custom']),
        ]),
      ),
);

const responseFormat = noArray(
  v.variant('type', [
    v.looseObject({ type: v.literal('text') }),
    v.looseObject({ type: v.literal('json_object') }),
    v.looseObject({
      type: v.literal('json_schema'),
      json_schema: noArray(
        v.looseObject({
          name: v.string(),
          description: v.nullish(v.string()),
          schema: v.nullish(jsonObject),
          strict: v.nullish(v.boolean()),
        }),
      ),
    }),
  ]),
);

const penalty = v.pipe(v.number(), v.minValue(-2), v.maxValue(2));

/** The request body of `POST /v1/openai/chat/completions`. */
export const chatCompletionRequestSchema = v.pipe(
  noArray(
    v.looseObject({
      model: v.string(),
      messages: v.pipe(v.array(message), v.minLength(1)),
      stream: v.nullish(v.boolean()),
      stream_options: v.nullish(
        noArray(
          v.looseObject({
            include_usage: v.nullish(v.boolean()),
            include_obfuscation: v.nullish(v.boolean()),
          }),
        ),
      ),
      max_tokens: v.nullish(v.pipe(int, v.minValue(1))),
      max_completion_tokens: v.nullish(v.pipe(int, v.minValue(1))),
      stop: v.nullish(
        v.lazy((input) =>
          Array.isArray(input) ? v.pipe(v.array(nonEmptyString), v.maxLength(4)) : nonEmptyString,
        ),
      ),
      temperature: v.nullish(v.pipe(v.number(), v.minValue(0), v.maxValue(2))),
      top_p: v.nullish(v.pipe(v.number(), v.minValue(0), v.maxValue(1))),
      seed: v.nullish(int),
      frequency_penalty: v.nullish(penalty),
      presence_penalty: v.nullish(penalty),
      logit_bias: v.nullish(
        noArray(
          v.record(
            v.pipe(v.string(), v.regex(/^\d+$/)),
            v.pipe(v.number(), v.minValue(-100), v.maxValue(100)),
          ),
        ),
      ),
      logprobs: v.nullish(v.boolean()),
      top_logprobs: v.nullish(v.pipe(int, v.minValue(0), v.maxValue(5))),
      n: v.nullish(v.pipe(int, v.minValue(1), v.maxValue(128))),
      response_format: v.nullish(responseFormat),
      tools: v.nullish(v.array(functionTool)),
      tool_choice: v.nullish(toolChoice),
      modalities: v.nullish(
        v.array(v.lazy((input) => (input === 'audio' ? unsupportedValue : v.literal('text')))),
      ),
      audio: unsupportedField,
      prediction: unsupportedField,
      web_search_options: unsupportedField,
      functions: unsupportedField,
      function_call: unsupportedField,
      // Extensions honoured on the device (docs/api.md's field table); other engines ignore them.
      repetition_penalty: v.nullish(v.pipe(v.number(), v.gtValue(0), v.maxValue(10))),
      ignore_eos: v.nullish(v.boolean()),
      enable_thinking: v.nullish(v.boolean()),
      echo_delay_ms: v.nullish(v.pipe(int, v.minValue(0), v.maxValue(10_000))),
    }),
  ),
  // Rules across fields run only once every field is valid on its own.
  v.forward(
    v.check(
      (r) => r.stream_options == null || r.stream === true,
      '`stream_options` is only allowed when `stream` is true.',
    ),
    ['stream_options'],
  ),
  v.forward(
    v.check(
      (r) => r.top_logprobs == null || r.logprobs === true,
      '`top_logprobs` needs `logprobs` set to true.',
    ),
    ['top_logprobs'],
  ),
  v.forward(
    v.check((r) => {
      // System and developer messages move to the front (validate.ts), so they do not count.
      const last = r.messages.findLast((m) => m.role !== 'system' && m.role !== 'developer')?.role;
      if (last === 'user') return true;
      // A tool result may close the conversation when tools are in play: offered now, or called
      // earlier (the turn that answers from the results goes without tools on WebLLM).
      const called = r.messages.some(
        (m) => m.role === 'assistant' && (m.tool_calls?.length ?? 0) > 0,
      );
      return last === 'tool' && ((r.tools?.length ?? 0) > 0 || called);
    }, 'The last message must be from the user (or a tool result, when tools are in play).'),
    ['messages'],
  ),
);

/** The request as the schema accepts it, before normalisation. */
export type ParsedChatRequest = v.InferOutput<typeof chatCompletionRequestSchema>;
