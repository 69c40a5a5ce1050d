/**
 * @module
 * Server-Sent Events as the OpenAI SDKs read them: `data: <json>\n\n` per event, `data: [DONE]`
 * last, `: comment` lines as keep-alives. Encoding escapes the characters that line-splitting
 * SSE parsers mistake for line ends; decoding is for our own clients and tests.
 */

/** The event that ends every stream. */
export const SSE_DONE = 'data: [DONE]\n\n';

/** A comment event, ignored by SSE parsers, that keeps intermediaries from timing out. */
export const SSE_KEEPALIVE = ': keep-alive\n\n';

// JSON.stringify leaves U+2028, U+2029 (legal in JSON since ES2019) and U+0085 raw; some SSE
// parsers split lines on them and would cut an event in two. Outside strings JSON has none of
// them, so escaping every occurrence is safe.
const LINE_BREAKERS = /[\u2028\u2029\u0085]/g;

function escapeLineBreakers(json: string): string {
  return json.replace(LINE_BREAKERS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** JSON text that is safe inside one SSE `data:` line. */
export function sseJson(value: unknown): string {
  return escapeLineBreakers(JSON.stringify(value));
}

/** One `data:` event carrying `value` as JSON. */
export function sseEvent(value: unknown): string {
  return `data: ${sseJson(value)}\n\n`;
}

/** One decoded SSE event: its `data` (lines joined by `\n`) and its `event` name, if any. */
export interface SseMessage {
  data: string;
  event?: string;
}

/**
 * Decodes an SSE byte stream into events, as the WHATWG parser does for `data` and `event`
 * fields: CRLF, CR and LF end lines; a blank line ends an event; comments are skipped.
 */
export async function* decodeSse(
  body: ReadableStream<Uint8Array>,
): AsyncGenerator<SseMessage, void, undefined> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  let event: string | undefined;
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        finished = true;
        break;
      }
      buffer += decoder.decode(value, { stream: true });
      let start = 0;
      for (;;) {
        const lf = buffer.indexOf('\n', start);
        const cr = buffer.indexOf('\r', start);
        const end = cr !== -1 && (lf === -1 || cr < lf) ? cr : lf;
        // A CR at the very end may be the first half of a CRLF split across reads.
        if (end === -1 || (end === cr && end === buffer.length - 1)) break;
        const line = buffer.slice(start, end);
        start = end + (end === cr && buffer[end + 1] === '\n' ? 2 : 1);
        if (line === '') {
          if (data.length > 0) {
            yield event === undefined
              ? { data: data.join('\n') }
              : { data: data.join('\n'), event };
          }
          data = [];
          event = undefined;
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        let value = colon === -1 ? '' : line.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        if (field === 'data') data.push(value);
        else if (field === 'event') event = value;
      }
      buffer = buffer.slice(start);
    }
  } finally {
    // A consumer that stops early cancels the body, which aborts the fetch behind it.
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
