/**
 * Bodies between the relay and its tab: as binary messages (the request id, then the bytes), not
 * base64 in JSON, and a request's body counted against the relay's cap of bodies held until the
 * WebSocket has sent it, not only while it is read.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WebSocket as NodeWebSocket } from 'ws';
import { eventually } from '../helpers';
import { chat, fakeTab, rawTab, relay, send, type Answer } from './harness';

afterEach(() => {
  vi.restoreAllMocks();
});

/** A body of `size` bytes that is JSON, as the API takes it. */
const bodyOf = (size: number) => {
  const pad = 'a'.repeat(size - chat('x', { pad: '' }).length);
  return chat('x', { pad });
};

/**
 * Holds back the callbacks of the binary messages the relay sends (its bodies), as a socket whose
 * peer does not read holds them: the bytes go, their sending is not done until `release()`.
 */
function holdBinarySends() {
  const held: (() => void)[] = [];
  const send = NodeWebSocket.prototype.send;
  vi.spyOn(NodeWebSocket.prototype, 'send').mockImplementation(function (
    this: NodeWebSocket,
    data: unknown,
    options?: unknown,
    callback?: (error?: Error) => void,
  ) {
    const binary =
      typeof options === 'object' && options !== null && 'binary' in options && options.binary;
    if (binary && typeof callback === 'function') {
      send.call(this, data as Buffer, options as object);
      held.push(() => callback());
      return;
    }
    return send.call(this, data as Buffer, options as object, callback);
  });
  return {
    release: () => {
      for (const done of held.splice(0)) done();
    },
    get held() {
      return held.length;
    },
  };
}

describe('bodies between the relay and its tab', () => {
  it('hands a request’s body to the tab as one binary message after the request, not as base64 in JSON', async () => {
    const { relay: r } = await relay();
    const messages: { binary: boolean; data: Buffer }[] = [];
    const tab = await rawTab(r, (data, binary) => messages.push({ binary, data }));
    const body = chat('as bytes, é and 日本');
    const answer = send(r, '/v1/openai/chat/completions', { body });
    await eventually(() => messages.length >= 2);
    const request = JSON.parse(String(messages[0]!.data));
    expect(request).toMatchObject({ type: 'request', body: Buffer.byteLength(body) });
    expect(messages[1]!.binary).toBe(true);
    expect(messages[1]!.data.readUInt32BE(0)).toBe(request.id);
    expect(messages[1]!.data.subarray(4).toString()).toBe(body);
    tab.terminate();
    await answer;
  });

  it('forwards the response body the tab sends as binary messages, in order', async () => {
    const { relay: r } = await relay();
    await fakeTab(r, ({ id }, tell, chunk) => {
      tell({ type: 'head', id, status: 200, headers: { 'content-type': 'text/plain' } });
      chunk(id, 'hello, ');
      chunk(id, 'é and 日本');
      tell({ type: 'end', id });
    });
    const answer = await send(r, '/v1/openai/models');
    expect(answer.status).toBe(200);
    expect(answer.body).toBe('hello, é and 日本');
  });

  it('holds a body’s bytes against its cap until the WebSocket has sent them: 429 for one that does not fit until then', async () => {
    const { relay: r } = await relay({ maxBodyBytes: 1024 * 1024 });
    const { requests } = await fakeTab(r);
    const sends = holdBinarySends();
    const first = send(r, '/v1/openai/chat/completions', { body: bodyOf(700 * 1024) });
    await eventually(() => requests.length === 1 && sends.held === 1);
    // Read whole and handed to the socket, not sent yet: still held, so 400 KiB more do not fit.
    const second = await send(r, '/v1/openai/chat/completions', { body: bodyOf(400 * 1024) });
    expect(second.status).toBe(429);
    expect(JSON.parse(second.body).error.code).toBe('queue_full');
    expect(requests).toHaveLength(1);
    // Sent: let go, and the same body fits.
    sends.release();
    const third = send(r, '/v1/openai/chat/completions', { body: bodyOf(400 * 1024) });
    await eventually(() => requests.length === 2);
    expect(requests[1]!.body?.length).toBe(400 * 1024);
    void first.catch(() => undefined);
    void third.catch(() => undefined);
  });

  it('never holds more bodies than its cap, however many callers send at once', async () => {
    const { relay: r } = await relay({ maxBodyBytes: 1024 * 1024 });
    const { requests } = await fakeTab(r);
    const sends = holdBinarySends();
    const size = 300 * 1024;
    const answers: Promise<Answer>[] = Array.from({ length: 10 }, () =>
      send(r, '/v1/openai/chat/completions', { body: bodyOf(size) }),
    );
    // Those refused are answered at once; the others wait on the tab, which does not answer.
    await eventually(() => requests.length + sends.held >= 2 && requests.length === sends.held);
    await Promise.race([Promise.all(answers), new Promise((resolve) => setTimeout(resolve, 500))]);
    expect(requests.length * size).toBeLessThanOrEqual(1024 * 1024);
    expect(requests.length).toBeGreaterThan(0);
    sends.release();
    for (const answer of answers) void answer.catch(() => undefined);
  });
});
