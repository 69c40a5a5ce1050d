/**
 * @module
 * Reading a request body: the content type, the size limit and the JSON, each with its own
 * status (415, 413, 400), never reading more bytes than the limit allows.
 */
import { OpenAIError } from './errors';

/** Largest request body, in bytes (docs/api.md, Order of checks: 413 over 4 MiB). */
export const BODY_LIMIT = 4 * 1024 * 1024;

/** Throws 415 unless the request says its body is `application/json`. */
export function assertJsonContentType(request: Request): void {
  const header = request.headers.get('content-type') ?? '';
  const mediaType = header.split(';', 1)[0]?.trim().toLowerCase();
  if (mediaType !== 'application/json') {
    const got = header === '' ? 'no content type' : `'${header.slice(0, 100)}'`;
    throw new OpenAIError(
      'unsupported_media_type',
      `The request body must be sent as 'application/json' (got ${got}).`,
    );
  }
}

/** 413: the body is larger than `limit`. */
export function tooLarge(limit: number): OpenAIError {
  return new OpenAIError(
    'request_too_large',
    `The request body is larger than the limit of ${limit} bytes.`,
  );
}

/**
 * The body's bytes, at most `limit` of them; one byte more is a 413 (and so is a declared length
 * over the limit, before anything is read). Where `Request.body` is a stream it is read with a
 * running count, never holding more than the limit; Firefox has no `Request.prototype.body` (it
 * is `undefined` there, not `null`), so there the body is read whole and then measured. A request
 * without a body reads as no bytes. Every body the API reads goes through here, and so do the
 * images it fetches (a `Response`).
 */
export async function readBodyBytes(
  request: Request | Response,
  limit: number,
): Promise<Uint8Array<ArrayBuffer>> {
  const declared = Number(request.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  // Typed as the browsers have it: `undefined` where the property does not exist (Firefox).
  const stream = (request as { body?: ReadableStream<Uint8Array> | null }).body;
  if (stream === undefined) {
    const bytes = new Uint8Array(await request.arrayBuffer());
    if (bytes.byteLength > limit) throw tooLarge(limit);
    return bytes;
  }
  if (stream === null) return new Uint8Array(0);
  const reader = stream.getReader();
  // A fetched body's chunks are never on shared memory.
  const parts: Uint8Array<ArrayBuffer>[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = (await reader.read()) as ReadableStreamReadResult<
      Uint8Array<ArrayBuffer>
    >;
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(limit);
    }
    parts.push(value);
  }
  if (parts.length === 1 && parts[0]) return parts[0];
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const part of parts) {
    bytes.set(part, offset);
    offset += part.byteLength;
  }
  return bytes;
}

function invalidJson(detail: string): OpenAIError {
  return new OpenAIError(
    'invalid_json',
    `We could not parse the JSON body of your request: ${detail}`,
  );
}

/** The bytes as JSON: 400 `invalid_json` for bad UTF-8, an empty body or bad JSON. */
export function parseJson(bytes: Uint8Array): unknown {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw invalidJson('the body is not valid UTF-8.');
  }
  if (text.trim() === '') throw invalidJson('the body is empty.');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw invalidJson(err instanceof Error ? err.message : 'not JSON.');
  }
}

/** The body parsed as JSON: 413 over the limit, 400 `invalid_json` for bad UTF-8 or JSON. */
export async function readJsonBody(request: Request, limit = BODY_LIMIT): Promise<unknown> {
  return parseJson(await readBodyBytes(request, limit));
}

/**
 * For endpoints whose body is optional: `undefined` when the request has none (no body, or zero
 * bytes), else the body as `readJsonBody` reads it, which must then be `application/json` (415).
 * Whether there is a body is known only by reading it: Firefox's requests have no `body` to ask.
 */
export async function readOptionalJsonBody(request: Request, limit = BODY_LIMIT): Promise<unknown> {
  const bytes = await readBodyBytes(request, limit);
  if (bytes.byteLength === 0) return undefined;
  assertJsonContentType(request);
  return parseJson(bytes);
}
