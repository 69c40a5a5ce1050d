/**
 * @module
 * WebLLM 0.2.86's errors as the API's: objects or `"Name: message"` strings, named ones by a
 * table, plain `Error`s by their message (the codes they become: docs/api.md, Errors).
 */
import { OpenAIError, type ErrorCode } from '../../protocol/errors';

/** How each WebLLM error reaches the client: code, and the request field at fault. */
const ERRORS: Record<string, [ErrorCode, string | null]> = {
  ContextWindowSizeExceededError: ['context_length_exceeded', 'messages'],
  MessageOrderError: ['invalid_value', 'messages'],
  SystemMessageOrderError: ['invalid_value', 'messages'],
  ContentTypeError: ['invalid_value', 'messages'],
  UnsupportedRoleError: ['invalid_value', 'messages'],
  UserMessageContentErrorForNonVLM: ['unsupported_parameter', 'messages'],
  MultipleTextContentError: ['invalid_value', 'messages'],
  UnsupportedContentPartError: ['unsupported_parameter', 'messages'],
  UnsupportedDetailError: ['unsupported_parameter', 'messages'],
  UnsupportedImageURLError: ['unsupported_parameter', 'messages'],
  // An image whose embedding (Phi-3.5-vision: more crops for a larger image) outgrows the
  // prefill chunk, which an image cannot be split across.
  PrefillChunkSizeSmallerThanImageError: ['invalid_value', 'messages'],
  CannotFindImageEmbedError: ['unsupported_parameter', 'messages'],
  // A system prompt cannot be combined with tools on WebLLM's function-calling models.
  CustomSystemPromptError: ['unsupported_parameter', 'messages'],
  CustomResponseFormatError: ['unsupported_parameter', 'response_format'],
  UnsupportedModelIdError: ['unsupported_parameter', 'tools'],
  StreamingCountError: ['unsupported_parameter', 'n'],
  InvalidStreamOptionsError: ['invalid_value', 'stream_options'],
  InvalidResponseFormatError: ['invalid_value', 'response_format'],
  InvalidResponseFormatGrammarError: ['invalid_value', 'response_format'],
  InvalidResponseFormatStructuralTagError: ['invalid_value', 'response_format'],
  GrammarMatcherInitError: ['invalid_value', 'response_format'],
  RangeError: ['invalid_value', null],
  MinValueError: ['invalid_value', null],
  NonNegativeError: ['invalid_value', null],
  InvalidNumberStringError: ['invalid_value', 'logit_bias'],
  DependencyError: ['invalid_value', 'top_logprobs'],
  SeedTypeError: ['invalid_value', 'seed'],
  WebGPUNotAvailableError: ['webgpu_unavailable', null],
  WebGPUNotFoundError: ['webgpu_unavailable', null],
  FeatureSupportError: ['webgpu_unavailable', null],
  ShaderF16SupportError: ['webgpu_unavailable', null],
  ModelNotFoundError: ['model_not_found', 'model'],
  SpecifiedModelNotFoundError: ['model_not_found', 'model'],
  // The device was lost during the load: most often, not enough GPU memory.
  DeviceLostError: ['webgpu_unavailable', null],
  // Embeddings (Hearth checks most of these first; the engine has the last word).
  EmbeddingExceedContextWindowSizeError: ['context_length_exceeded', 'input'],
  EmbeddingInputEmptyError: ['invalid_value', 'input'],
  EmbeddingUnsupportedEncodingFormatError: ['unsupported_parameter', 'encoding_format'],
  EmbeddingUnsupportedModelError: ['invalid_value', 'model'],
  IncorrectPipelineLoadedError: ['invalid_value', 'model'],
};

/**
 * Plain `Error`s WebLLM throws, told apart only by their message (WebLLM gives them no class of
 * their own): no adapter, or one whose limits are too small (`detectGPUDevice`); a message role
 * the model's template has not got.
 */
const PLAIN_ERRORS: [RegExp, ErrorCode, string | null][] = [
  [/^Unable to find a compatible GPU/, 'webgpu_unavailable', null],
  [/^Cannot initialize runtime because of requested/, 'webgpu_unavailable', null],
  [/^Role is not supported: /, 'unsupported_parameter', 'messages'],
];

/** The name and message of an error WebLLM threw, whether an object or a `"Name: msg"` string. */
export function errorParts(err: unknown): { name: string; message: string } {
  if (err instanceof Error) return { name: err.name, message: err.message };
  const text = String(err);
  const match = /^([A-Za-z0-9]*Error):\s*([\s\S]*)$/.exec(text);
  return match
    ? { name: match[1] ?? 'Error', message: match[2] ?? '' }
    : { name: 'Error', message: text };
}

/** The field a WebLLM value error names: "Make sure 0 < top_p <= 1.", or quoted in backticks. */
function paramIn(message: string): string | null {
  return (
    /Make sure (?:[-\d.]+ <=? )?([a-z_]+)\b/.exec(message)?.[1] ??
    /`([a-z_]+)`/.exec(message)?.[1] ??
    null
  );
}

/** WebLLM's error as the API's. */
export function fromWebLLMError(err: unknown): OpenAIError {
  if (err instanceof OpenAIError) return err;
  const { name, message } = errorParts(err);
  // WebLLM's own `RangeError` (a bad field) shadows the built-in's name; the built-in one is a
  // failure of the engine (an array too long, a stack overflow), not of the request.
  const native = err instanceof globalThis.RangeError;
  const known = native ? undefined : ERRORS[name];
  if (known) {
    const [code, param] = known;
    return new OpenAIError(code, message || name, {
      param: param ?? paramIn(message),
      ...(code === 'webgpu_unavailable' && { shouldRetry: false }),
    });
  }
  for (const [pattern, code, param] of PLAIN_ERRORS) {
    if (name !== 'Error' || !pattern.test(message)) continue;
    const text =
      code === 'unsupported_parameter'
        ? `This model's chat template has no place for that message: ${message}.`
        : `WebGPU cannot run this model here: ${message}`;
    return new OpenAIError(code, text, {
      param,
      ...(code === 'webgpu_unavailable' && { shouldRetry: false }),
    });
  }
  if (name === 'QuotaExceededError') {
    return new OpenAIError(
      'engine_error',
      `The device's storage is full, so the model's files could not be kept: ${message}`,
    );
  }
  return new OpenAIError('engine_error', `The engine failed: ${name}: ${message}`);
}
