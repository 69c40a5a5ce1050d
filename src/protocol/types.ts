/**
 * @module
 * Wire types of the chat-completions API: the subset Hearth accepts and emits. Field names keep
 * the API's snake_case. Types only.
 */

/** Why a generation ended. */
export type FinishReason = 'stop' | 'length' | 'tool_calls';

/** A role a message may have after normalisation (`developer` has become `system`). */
export type MessageRole = 'system' | 'user' | 'assistant' | 'tool';

/** A tool call an assistant made, as the API carries it. */
export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** The image formats the API takes (GIF: its first frame). */
export type ImageType = 'image/png' | 'image/jpeg' | 'image/webp' | 'image/gif';

/** An image as an engine gets it: the file's bytes, checked and measured. */
export interface InputImage {
  type: ImageType;
  width: number;
  height: number;
  bytes: Uint8Array<ArrayBuffer>;
}

/** One part of a message that carries images, in the order the client gave them. */
export type MessagePart =
  | { type: 'text'; text: string }
  | {
      type: 'image';
      /** Where it was in the request (`messages[1].content[2]`), for the errors that name it. */
      param: string;
      detail?: 'auto' | 'low' | 'high';
      /**
       * The part's `url` as the client sent it, until `api/images.ts` reads it; then the image.
       * The URL is dropped once read: a data URL is as big as the file.
       */
      source: { url: string } | InputImage;
    };

/** A message as every engine sees it: content is always a string. */
export interface ChatMessage {
  role: MessageRole;
  /** The text (of a message with images, its text parts joined). */
  content: string;
  /** A user message with images: its parts, text and images in order (`content` has the text). */
  parts?: MessagePart[];
  /** Tool calls of an assistant message. */
  tool_calls?: ToolCall[];
  /** The call a tool message answers. */
  tool_call_id?: string;
}

/** A function the model may call. */
export interface FunctionTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

/** How the reply must be shaped. */
export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | {
      type: 'json_schema';
      json_schema: {
        name: string;
        description?: string;
        schema?: Record<string, unknown>;
        strict?: boolean;
      };
    };

/**
 * A validated, normalised chat request: what crosses to the engine. Absent optional fields were
 * absent or null in the request.
 */
export interface ChatRequest {
  model: string;
  /** At most one system message, first; then the conversation. */
  messages: ChatMessage[];
  stream: boolean;
  /** `stream_options.include_usage`. */
  include_usage: boolean;
  /** `max_completion_tokens`, or else `max_tokens`. */
  max_tokens?: number;
  /** Stop strings (a single string arrives as a one-element list). */
  stop?: string[];
  temperature?: number;
  top_p?: number;
  seed?: number;
  frequency_penalty?: number;
  presence_penalty?: number;
  logit_bias?: Record<string, number>;
  logprobs?: boolean;
  top_logprobs?: number;
  /** Number of choices; 1 unless the caller asked for more. */
  n: number;
  response_format?: ResponseFormat;
  tools?: FunctionTool[];
  tool_choice?: 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };
  /** WebLLM extension: penalises tokens already in the text (> 0; 1 is none). */
  repetition_penalty?: number;
  /** WebLLM extension: keep generating past end-of-sequence, up to `max_tokens`. */
  ignore_eos?: boolean;
  /** Reasoning models (Qwen3): `false` answers without thinking first. */
  enable_thinking?: boolean;
  /** Echo engine only: pause before each token, in milliseconds. */
  echo_delay_ms?: number;
}

/** Token counts of one request, plus its price. */
export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** US dollars: tokens times the model's price per token (0 for on-device models by default). */
  estimated_cost: number;
}

/** One alternative at a token position. */
export interface TopLogprob {
  token: string;
  logprob: number;
  bytes: number[] | null;
}

/** The log probability of one emitted token, and of the alternatives asked for. */
export interface TokenLogprob extends TopLogprob {
  top_logprobs: TopLogprob[];
}

/** `choices[].logprobs` when `logprobs` was asked for. */
export interface ChoiceLogprobs {
  content: TokenLogprob[];
  refusal: null;
}

/** The assistant's message in a non-streamed reply. */
export interface AssistantMessage {
  role: 'assistant';
  /** Null when the model answered with tool calls only. */
  content: string | null;
  /** What a reasoning model thought before answering (DeepSeek's field, read by most clients). */
  reasoning_content?: string;
  tool_calls?: ToolCall[];
  refusal: null;
}

/** One choice of a non-streamed reply. */
export interface CompletionChoice {
  index: number;
  message: AssistantMessage;
  logprobs: ChoiceLogprobs | null;
  finish_reason: FinishReason;
}

/** A non-streamed reply. */
export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: CompletionChoice[];
  /** Null where the backend could not count (a server that sends no usage). */
  usage: Usage | null;
}

/** A tool call as a stream delta carries it. */
export interface ToolCallDelta extends ToolCall {
  index: number;
}

/** The delta of a stream chunk: the role first, then content, reasoning or tool calls. */
export interface ChunkDelta {
  role?: 'assistant';
  content?: string;
  reasoning_content?: string;
  tool_calls?: ToolCallDelta[];
}

/** One event of a streamed reply. */
export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: {
    index: number;
    delta: ChunkDelta;
    logprobs: ChoiceLogprobs | null;
    finish_reason: FinishReason | null;
  }[];
  /** Present only with `include_usage`: null on every chunk but the usage chunk. */
  usage?: Usage | null;
}

/** A model as `GET /v1/openai/models` lists it. */
export interface ModelObject {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  context_window: number;
  /** Only on embedding models. */
  embeddings?: true;
  /** An embedding model's vector length (null until known). */
  dimensions?: number | null;
  /** Only on models of this device that take images (`image_url` parts). */
  vision?: true;
  /** A model of a server the user added: requests for it leave this device. */
  leaves_device?: true;
  server?: string;
  host?: string;
}

/**
 * An embeddings request after validation: every input, in order, as text or as token ids (a
 * single input given alone becomes a list of one).
 */
export interface EmbeddingRequest {
  model: string;
  input: string[] | number[][];
}

/** A list body, `{object:"list", data}`. */
export interface ListBody<T> {
  object: 'list';
  data: T[];
}
