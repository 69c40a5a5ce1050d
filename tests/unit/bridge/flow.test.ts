/**
 * Flow control across the bridge (issue 16, defect 9): what a reply may hold in the service
 * worker is bounded, a reader that stops cannot hold the engine for ever, and finished unread
 * replies cannot pile up without limit.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FlowOptions } from '../../../src/bridge/client';
import {
  REPLY_WINDOW_BYTES,
  type ReplyMessage,
  type RequestMessage,
} from '../../../src/bridge/messages';
import { EchoEngine } from '../../../src/engines/echo/echo-engine';
import type { EngineOutput } from '../../../src/engines/engine';
import { decodeSse } from '../../../src/protocol/sse';
import type { ChatRequest } from '../../../src/protocol/types';
import { parseChatRequest } from '../../../src/protocol/validate';
import { chatRequest, echoBody, echoStack, eventually, sleep } from '../helpers';

/** The echo engine, counting the tokens it has produced. */
class CountingEcho extends EchoEngine {
  produced = 0;
  override async *generate(request: ChatRequest, signal: AbortSignal) {
    for await (const output of super.generate(request, signal)) {
      if (output.type === 'token') this.produced += 1;
      yield output as EngineOutput;
    }
  }
}

/** The API over the real bridge and queue, with the flow limits given. */
const flowStack = (flow: FlowOptions = {}) => echoStack({ engine: new CountingEcho(), flow });

let stack: ReturnType<typeof flowStack> | undefined;
afterEach(() => stack?.close());

const words = (n: number, tag = 'w') => Array.from({ length: n }, (_, i) => `${tag}${i}`).join(' ');

/** Waits until the engine has produced nothing new for a while. */
async function settled(engine: CountingEcho): Promise<number> {
  for (;;) {
    const before = engine.produced;
    await sleep(100);
    if (engine.produced === before) return before;
  }
}

async function lastEvent(body: ReadableStream<Uint8Array>): Promise<unknown> {
  let last: unknown;
  for await (const message of decodeSse(body)) {
    last = message.data === '[DONE]' ? '[DONE]' : JSON.parse(message.data);
  }
  return last;
}

describe('flow control between the engine and the service worker', () => {
  it('holds a reply to its window ahead of a reader that stopped, and pauses the engine', async () => {
    stack = flowStack({ readerWaitMs: 60_000 });
    const total = 200_000;
    const response = await stack.api.fetch(chatRequest(echoBody(words(total), { stream: true })));
    const reader = response.body!.getReader();
    await reader.read(); // one read, then nothing
    const produced = await settled(stack.engine);
    // The engine waits for its reader: it has not run through the whole reply…
    expect(produced).toBeLessThan(total / 4);
    expect(stack.queue.counts.running).toBe(1);
    // …and the service worker holds at most a window (and the batch that crossed it).
    expect(stack.backend.bufferedBytes).toBeGreaterThan(0);
    expect(stack.backend.bufferedBytes).toBeLessThanOrEqual(REPLY_WINDOW_BYTES + 64 * 1024);
    // Reading resumes the engine, and the reply comes whole.
    const decoder = new TextDecoder();
    let text = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(stack.engine.produced).toBe(total);
    expect(stack.backend.bufferedBytes).toBe(0);
  });

  it('ends with reader_too_slow a reply whose reader took nothing while the engine waited; the next request runs', async () => {
    stack = flowStack({ readerWaitMs: 300 });
    const total = 200_000;
    const stalled = await stack.api.fetch(chatRequest(echoBody(words(total), { stream: true })));
    const reader = stalled.body!.getReader();
    await reader.read();
    const started = Date.now();
    const next = await stack.api.fetch(chatRequest(echoBody('next')));
    expect(next.status).toBe(200);
    expect(
      ((await next.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message
        .content,
    ).toBe('next');
    // It waited for the reader's time to run out, not for the whole reply.
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(stack.engine.produced).toBeLessThan(total / 4 + 1);
    // What the stopped reply held is gone, and its port is closed.
    expect(stack.backend.bufferedBytes).toBe(0);
    await eventually(() => stack!.server.openPorts === 0 && stack!.queue.counts.running === 0);
    reader.releaseLock();
    expect(await lastEvent(stalled.body!)).toMatchObject({
      error: { code: 'reader_too_slow', type: 'invalid_request_error' },
    });
  });

  it('a slow reader that keeps reading gets its whole reply', async () => {
    stack = flowStack({ windowBytes: 16 * 1024, readerWaitMs: 200 });
    const total = 3_000;
    const response = await stack.api.fetch(chatRequest(echoBody(words(total), { stream: true })));
    let reads = 0;
    const reader = response.body!.getReader();
    let text = '';
    const decoder = new TextDecoder();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      if ((reads += 1) % 3 === 0) await sleep(50);
    }
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(text).not.toContain('reader_too_slow');
    expect(stack.engine.produced).toBe(total);
  });

  it('bounds finished unread replies across requests: the reader idle longest is ended', async () => {
    const windowBytes = 64 * 1024;
    stack = flowStack({ windowBytes, totalBytes: 3 * windowBytes, readerWaitMs: 60_000 });
    // Each reply fits its window, so each finishes and waits whole for its reader.
    const readers = [];
    for (let i = 0; i < 6; i += 1) {
      const response = await stack.api.fetch(
        chatRequest(echoBody(words(1_000, `r${i}-`), { stream: true })),
      );
      readers.push(response.body!);
      await eventually(() => stack!.queue.counts.running === 0);
      expect(stack.backend.bufferedBytes).toBeLessThanOrEqual(3 * windowBytes);
    }
    // The oldest were crowded out; the newest come whole.
    expect(await lastEvent(readers[0]!)).toMatchObject({ error: { code: 'reader_too_slow' } });
    expect(await lastEvent(readers[5]!)).toBe('[DONE]');
    expect(stack.backend.bufferedBytes).toBeLessThanOrEqual(3 * windowBytes);
  });

  it('a reader that keeps up gets a long reply whole, never held back', async () => {
    stack = flowStack();
    const total = 50_000;
    const response = await stack.api.fetch(chatRequest(echoBody(words(total), { stream: true })));
    let events = 0;
    for await (const message of decodeSse(response.body!)) if (message.data) events += 1;
    expect(events).toBe(total + 2);
    expect(stack.engine.produced).toBe(total);
    expect(stack.backend.bufferedBytes).toBe(0);
  });

  it('the engine worker gives a request up when the service worker grants nothing for too long (it is gone)', async () => {
    stack = flowStack();
    // A service worker that starts a request and then says nothing more, as a stopped one would.
    const { port1: hostSide, port2: workerSide } = new MessageChannel();
    stack.server.attach(workerSide);
    const { port1: mine, port2: theirs } = new MessageChannel();
    const replies: ReplyMessage[] = [];
    mine.onmessage = (event: MessageEvent<ReplyMessage>) => void replies.push(event.data);
    const first: RequestMessage = {
      type: 'chat/start',
      requestId: 'gone',
      request: parseChatRequest(echoBody(words(50_000), { stream: true })),
      window: 16 * 1024,
      creditWaitMs: 300,
    };
    hostSide.postMessage({ type: 'request/open', port: theirs, first }, [theirs]);
    await eventually(() => replies.some((r) => r.type === 'chat/error'), 3000);
    expect(replies.find((r) => r.type === 'chat/error')).toMatchObject({
      error: { code: 'reader_too_slow' },
    });
    expect(stack.engine.produced).toBeLessThan(5_000);
    await eventually(() => stack!.queue.counts.running === 0 && stack!.server.openPorts === 0);
    // The engine is free for the next request.
    const next = await stack.api.fetch(chatRequest(echoBody('next')));
    expect(next.status).toBe(200);
    mine.close();
    hostSide.close();
  });
});
