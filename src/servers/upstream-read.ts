/**
 * @module
 * Reading what a user's server sends back, never more than a cap: a whole JSON reply, an error
 * body, an SSE stream's events. A server that sends without end (a proxy's endless page, a stream
 * whose line never ends) would otherwise fill the service worker's memory; past the cap the read
 * stops, the connection is cancelled, and the request is a 502 `upstream_error` that says so.
 */
import { OpenAIError } from '../protocol/errors';

const MiB = 1024 * 1024;
/**
 * Largest whole reply (chat without `stream`, embeddings), in bytes: 2048 embeddings of 1024
 * floats as JSON text, or a long reply with logprobs, fit with room to spare.
 */
export const UPSTREAM_REPLY_LIMIT = 16 * MiB;
/** Largest `GET /models` list read when a server is added: thousands of models. */
export const UPSTREAM_MODELS_LIMIT = 4 * MiB;
/**
 * Largest SSE line, or event of several `data:` lines, in a stream: a chunk is a few tokens, or a
 * tool call's arguments sent at once; a stream as a whole may be any length.
 */
export const UPSTREAM_EVENT_LIMIT = 4 * MiB;
/** How much of an error reply is read: its message is cut to 1000 characters anyway. */
export const UPSTREAM_ERROR_READ = 64 * 1024;

const sizeText = (bytes: number) =>
  bytes % MiB === 0 ? `${bytes / MiB} MiB` : `${Math.round(bytes / 1024)} KiB`;

/** The connection to a server broke while its reply was being read (an abort is rethrown). */
export function lostMidway(err: unknown, server: string): unknown {
  if (err instanceof DOMException && err.name === 'AbortError') return err;
  if (err instanceof OpenAIError) return err;
  const detail = err instanceof Error ? err.message : String(err);
  return new OpenAIError(
    'upstream_error',
    `The connection to the server ${server} broke during its reply (${detail}).`,
  );
}

function tooLarge(server: string, what: string, limit: number): OpenAIError {
  return new OpenAIError(
    'upstream_error',
    `The server ${server} sent ${what} larger than ${sizeText(limit)}, more than Hearth reads; it was not read to its end.`,
  );
}

/**
 * The reply's text, at most `limit` bytes of it: more is a 502 (`truncate`: the first `limit`
 * bytes, for an error body whose message is all that matters). Errors while reading are thrown
 * as they come (the caller knows what a broken connection or a timeout means).
 */
export async function readCapped(
  response: Response,
  limit: number,
  server: string,
  { what = 'a reply', truncate = false }: { what?: string; truncate?: boolean } = {},
): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  if (!truncate && Number.isFinite(declared) && declared > limit) {
    await response.body?.cancel().catch(() => undefined);
    throw tooLarge(server, what, limit);
  }
  if (!response.body) return '';
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let size = 0;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return text + decoder.decode();
      size += value.byteLength;
      if (size > limit) {
        if (!truncate) throw tooLarge(server, what, limit);
        return text + decoder.decode(value.subarray(0, value.byteLength - (size - limit)));
      }
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    // Ends the fetch when the read stops early (too large, or failed).
    await reader.cancel().catch(() => undefined);
  }
}

/**
 * The `data:` payloads of an SSE body, as they arrive: every event one read completes, together,
 * so that a fast server's burst costs one step here and one write to the client, not one each.
 * An event's `data` lines are joined as they come (most events have one): no array per event. A
 * line, or an event, over `limit` characters is a 502: no newline would otherwise mean no end.
 */
export async function* sseData(
  body: ReadableStream<Uint8Array>,
  server: string,
  limit = UPSTREAM_EVENT_LIMIT,
): AsyncGenerator<string[]> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string | undefined;
  const take = (line: string, events: string[]) => {
    if (line === '') {
      if (data !== undefined) events.push(data);
      data = undefined;
    } else if (line.startsWith('data:')) {
      const value = line.slice(line[5] === ' ' ? 6 : 5);
      data = data === undefined ? value : `${data}\n${value}`;
      if (data.length > limit) throw tooLarge(server, 'an event', limit);
    }
  };
  try {
    for (;;) {
      const { value, done } = await reader.read().catch((err: unknown) => {
        throw lostMidway(err, server);
      });
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      const events: string[] = [];
      let start = 0;
      // Most servers end lines with \n alone: look for \r only where there is one.
      let cr = buffer.indexOf('\r');
      for (;;) {
        if (cr !== -1 && cr < start) cr = buffer.indexOf('\r', start);
        const lf = buffer.indexOf('\n', start);
        let end: number;
        let next: number;
        if (cr !== -1 && (lf === -1 || cr < lf)) {
          // A \r that ends what came so far may be the first half of \r\n: wait for more.
          if (cr === buffer.length - 1) break;
          end = cr;
          next = buffer[cr + 1] === '\n' ? cr + 2 : cr + 1;
        } else if (lf !== -1) {
          end = lf;
          next = lf + 1;
        } else {
          break;
        }
        take(end === start ? '' : buffer.slice(start, end), events);
        start = next;
      }
      buffer = start === buffer.length ? '' : buffer.slice(start);
      // What is left is a line not ended yet: past the cap, it will not end in time.
      if (buffer.length > limit) throw tooLarge(server, 'an event', limit);
      if (events.length > 0) yield events;
    }
    const events: string[] = [];
    for (const line of buffer.split(/\r\n|\r|\n/)) take(line, events);
    take('', events);
    if (events.length > 0) yield events;
  } finally {
    // Ends the fetch when the reader stops early (the client went, or the reply failed).
    await reader.cancel().catch(() => undefined);
  }
}
