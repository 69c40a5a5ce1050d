/**
 * @module
 * src/protocol/ is the OpenAI wire protocol, pure: the request's types, schema, validation and
 * normalisation, body reading, responses, SSE, errors, the install's names and the private-
 * network rule for fetches made for the caller. It imports nothing of ours (valibot only), and
 * not its host/ subfolder; everything else may import it.
 *
 * The one error hierarchy of the API: every failure, wherever it happens (validation, the service
 * worker, the bridge, the engine worker), is an `OpenAIError` that knows its HTTP status, its
 * OpenAI `type` and `code`, and renders itself as the wire's `{"error":{…}}` body. It crosses
 * `postMessage` as plain data (`SerializedError`), never as a string.
 */

/** Status and OpenAI `type` of every error code the API emits (docs/api.md, Errors). */
const CODES = {
  invalid_json: [400, 'invalid_request_error'],
  missing_field: [400, 'invalid_request_error'],
  invalid_type: [400, 'invalid_request_error'],
  invalid_value: [400, 'invalid_request_error'],
  unsupported_parameter: [400, 'invalid_request_error'],
  context_length_exceeded: [400, 'invalid_request_error'],
  invalid_api_key: [401, 'authentication_error'],
  model_not_found: [404, 'not_found_error'],
  model_not_downloaded: [404, 'not_found_error'],
  unknown_url: [404, 'not_found_error'],
  // A response, or an item of one, that is not kept on the device (never stored, deleted, or
  // past the bounds of docs/api.md's Responses section).
  // OpenAI's type for it, where its other 404s have `not_found_error`.
  response_not_found: [404, 'invalid_request_error'],
  // A file (docs/api.md, Files) not kept on the device: never uploaded, or deleted. OpenAI's type.
  file_not_found: [404, 'invalid_request_error'],
  // A vector store (docs/api.md, Vector stores) not kept on the device. OpenAI's type.
  vector_store_not_found: [404, 'invalid_request_error'],
  method_not_allowed: [405, 'invalid_request_error'],
  model_in_use: [409, 'invalid_request_error'],
  // Adding a model under an id the catalogue has (built in, or added before).
  model_exists: [409, 'invalid_request_error'],
  // A vector store needs an embedding model on the device, and none is there (or several, and
  // none was chosen): the message says how to get or choose one.
  embedding_model_required: [409, 'invalid_request_error'],
  request_too_large: [413, 'invalid_request_error'],
  unsupported_media_type: [415, 'invalid_request_error'],
  queue_full: [429, 'rate_limit_error'],
  engine_error: [500, 'server_error'],
  // An exception nobody expected in the API layer: a bug in Hearth, not a failure of the engine.
  server_error: [500, 'server_error'],
  // A download that the device's storage quota cannot hold (what it had stored is removed).
  storage_full: [507, 'server_error'],
  // A download whose model host could not be reached, or whose connection kept breaking (offline,
  // DNS, refused, reset: fetch's TypeError), through its retries. The network's failure, not the
  // engine's: 503, which the openai SDKs and HTTP clients retry, as it may pass once back online.
  download_unreachable: [503, 'unavailable_error'],
  // Only ever sent in-band, as the last event of a stream that produced no token for too long.
  engine_stalled: [500, 'server_error'],
  // Only ever sent in-band: the stream's reader took nothing for too long while the engine waited
  // on it, or while the service worker's buffers were full and it had gone longest without reading.
  reader_too_slow: [408, 'invalid_request_error'],
  engine_unavailable: [503, 'unavailable_error'],
  // The owner's settings (auth mode, issued keys) could not be read: no call is let through on a
  // guess, and no change is written over what could not be read.
  settings_unavailable: [503, 'unavailable_error'],
  webgpu_unavailable: [503, 'unavailable_error'],
  engine_busy: [503, 'unavailable_error'],
  model_loading: [503, 'unavailable_error'],
  // A server the user added (docs/servers.md; docs/api.md, Errors): it answered with an error (passed on with its status
  // where it gave one), it could not be reached or refused CORS, or it took too long.
  upstream_error: [502, 'server_error'],
  upstream_unavailable: [503, 'server_error'],
  upstream_timeout: [504, 'server_error'],
} as const satisfies Record<string, readonly [number, string]>;

/** An error code of the API (`error.code` on the wire). */
export type ErrorCode = keyof typeof CODES;

/**
 * Codes a retry cannot help, whatever their status says (`x-should-retry: false`): the openai SDK
 * would otherwise retry a 507 twice with backoff, and a full disk is not freed by waiting.
 */
const NEVER_RETRIED: ReadonlySet<ErrorCode> = new Set(['storage_full']);

/** OpenAI's error type for a status it did not choose (an upstream server's). */
function typeOfStatus(status: number): ErrorType {
  if (status === 401 || status === 403) return 'authentication_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 400 && status < 500) return 'invalid_request_error';
  return status === 503 ? 'unavailable_error' : 'server_error';
}
/** An OpenAI error type (`error.type` on the wire). */
export type ErrorType = (typeof CODES)[ErrorCode][1];

/** The JSON body of every error response. */
export interface ErrorBody {
  error: {
    /** A sentence for people. */
    message: string;
    /** The OpenAI error class, e.g. `invalid_request_error`. */
    type: ErrorType;
    /** The request field at fault, as a path such as `messages[2].role`, or null. */
    param: string | null;
    /** The machine-readable reason, e.g. `model_not_found`. */
    code: ErrorCode;
  };
}

/** Extra facts an error carries to its response. */
export interface ErrorOptions {
  /** The request field at fault. */
  param?: string | null;
  /** Seconds after which a retry can succeed (`retry-after`). */
  retryAfter?: number;
  /** Whether a retry can help at all (`x-should-retry`), when it differs from the status's default. */
  shouldRetry?: boolean;
  /** Further response headers, e.g. `allow` on a 405. */
  headers?: Record<string, string>;
  /**
   * The status, where it is not the code's own: an upstream server's error is passed on with the
   * status it gave (its type follows the status).
   */
  status?: number;
}

/** An `OpenAIError` as plain data, for `postMessage` and JSON. */
export interface SerializedError extends ErrorOptions {
  code: ErrorCode;
  message: string;
}

/** An API failure with everything its HTTP response needs. */
export class OpenAIError extends Error {
  override readonly name = 'OpenAIError';
  /** HTTP status of the response. */
  readonly status: number;
  /** OpenAI error type. */
  readonly type: ErrorType;
  readonly code: ErrorCode;
  readonly param: string | null;
  readonly retryAfter: number | undefined;
  readonly shouldRetry: boolean | undefined;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, options: ErrorOptions = {}) {
    super(message);
    const [status, type] = CODES[code];
    this.code = code;
    this.status = options.status ?? status;
    this.type = options.status === undefined ? type : typeOfStatus(options.status);
    this.param = options.param ?? null;
    this.retryAfter = options.retryAfter;
    this.shouldRetry = options.shouldRetry ?? (NEVER_RETRIED.has(code) ? false : undefined);
    this.headers = options.headers ?? {};
  }

  /** The wire body, `{"error":{message,type,param,code}}`. */
  toBody(): ErrorBody {
    return {
      error: { message: this.message, type: this.type, param: this.param, code: this.code },
    };
  }

  /** The response headers this error adds (`retry-after`, `x-should-retry`, …). */
  responseHeaders(): Record<string, string> {
    const headers: Record<string, string> = { ...this.headers };
    if (this.retryAfter !== undefined) headers['retry-after'] = String(Math.ceil(this.retryAfter));
    if (this.shouldRetry !== undefined) headers['x-should-retry'] = String(this.shouldRetry);
    return headers;
  }

  /** Plain data for `postMessage`; `OpenAIError.deserialize` restores it. */
  serialize(): SerializedError {
    const data: SerializedError = { code: this.code, message: this.message, param: this.param };
    if (this.retryAfter !== undefined) data.retryAfter = this.retryAfter;
    if (this.shouldRetry !== undefined) data.shouldRetry = this.shouldRetry;
    if (Object.keys(this.headers).length > 0) data.headers = { ...this.headers };
    if (this.status !== CODES[this.code][0]) data.status = this.status;
    return data;
  }

  /** Restores an error sent as `SerializedError`; an unknown code becomes `engine_error`. */
  static deserialize(data: SerializedError): OpenAIError {
    if (!Object.hasOwn(CODES, data.code)) return new OpenAIError('engine_error', data.message);
    return new OpenAIError(data.code, data.message, data);
  }

  /**
   * The single place where an unexpected failure in the API layer becomes an API error: an
   * `OpenAIError` passes through, anything else is a bug in Hearth, a 500 `server_error` that says
   * so and keeps the original message (retrying will not help). What an engine reports reaches
   * the API layer as an `OpenAIError` already: the engine's side turns its failures into errors
   * with `fromEngine`.
   */
  static from(err: unknown): OpenAIError {
    if (err instanceof OpenAIError) return err;
    return new OpenAIError(
      'server_error',
      `Internal error in Hearth (a bug, not a failure of the engine): ${detailOf(err)}`,
      { shouldRetry: false },
    );
  }

  /**
   * A failure thrown while an engine ran (on the engine host's side of the bridge): an
   * `OpenAIError` passes through, anything else is a 500 `engine_error` that keeps its message.
   */
  static fromEngine(err: unknown): OpenAIError {
    if (err instanceof OpenAIError) return err;
    return new OpenAIError('engine_error', `The engine failed: ${detailOf(err)}`);
  }
}

/** What was thrown, in words: `Name: message` for an `Error`. */
function detailOf(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}
