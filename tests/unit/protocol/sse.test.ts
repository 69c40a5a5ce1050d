import { describe, expect, it } from 'vitest';
import { decodeSse, SSE_DONE, sseEvent, sseJson } from '../../../src/protocol/sse';

function streamOf(...parts: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const part of parts) controller.enqueue(encoder.encode(part));
      controller.close();
    },
  });
}

async function decodeAll(...parts: string[]) {
  const events = [];
  for await (const event of decodeSse(streamOf(...parts))) events.push(event);
  return events;
}

describe('sseEvent', () => {
  it('frames a value as one data line ended by a blank line', () => {
    expect(sseEvent({ a: 1 })).toBe('data: {"a":1}\n\n');
  });

  it('escapes U+2028, U+2029 and U+0085 so line-splitting parsers keep the event whole', () => {
    const text = 'a\u2028b\u2029c\u0085d';
    const event = sseEvent({ text });
    expect(event).toBe('data: {"text":"a\\u2028b\\u2029c\\u0085d"}\n\n');
    expect(event.split(/\r\n|\r|\n|\u2028|\u2029|\u0085/)).toHaveLength(3);
    expect(JSON.parse(event.slice(6))).toEqual({ text });
  });

  it('keeps newlines in strings escaped, so an event is always one line', () => {
    expect(sseJson('line\nbreak\r')).toBe('"line\\nbreak\\r"');
  });

  it('ends every stream with [DONE]', () => {
    expect(SSE_DONE).toBe('data: [DONE]\n\n');
  });
});

describe('decodeSse', () => {
  it('decodes data events and skips comments', async () => {
    expect(await decodeAll(': keep-alive\n\n', 'data: {"a":1}\n\n', SSE_DONE)).toEqual([
      { data: '{"a":1}' },
      { data: '[DONE]' },
    ]);
  });

  it('reassembles events split at any byte, CRLF included', async () => {
    const text = 'event: x\r\ndata: one\r\ndata: two\r\n\r\ndata: é\n\n';
    const bytes = new TextEncoder().encode(text);
    // Single bytes, so that CRLF and the two bytes of "é" arrive in separate reads.
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 1) controller.enqueue(bytes.slice(i, i + 1));
        controller.close();
      },
    });
    const events = [];
    for await (const event of decodeSse(stream)) events.push(event);
    expect(events).toEqual([{ event: 'x', data: 'one\ntwo' }, { data: 'é' }]);
  });

  it('cancels the body when the consumer stops early', async () => {
    let cancelled = false;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(new TextEncoder().encode('data: 1\n\n'));
      },
      cancel() {
        cancelled = true;
      },
    });
    for await (const event of decodeSse(stream)) {
      expect(event.data).toBe('1');
      break;
    }
    expect(cancelled).toBe(true);
  });
});
