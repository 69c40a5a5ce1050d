import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { abusiveRequest, faultIn, type AbusiveRequest } from '../../abuse-corpus';
import { echoExpectation } from '../../fuzz/oracle';
import { chatRequest, echoBody, echoStack, URL_BASE } from '../helpers';

const stack = echoStack();
afterAll(() => stack.close());

function toRequest(r: AbusiveRequest): Request {
  return new Request(`${URL_BASE}/${r.path}`, {
    method: r.method,
    headers: r.headers,
    ...(r.body && { body: new Uint8Array(r.body) }),
  });
}

async function answer(response: Response) {
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    requestId: response.headers.get('x-request-id'),
    text: await response.text(),
  };
}

/** Rejects if `promise` takes longer than `ms`: a hang is a failure, not a slow test. */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  return Promise.race([
    promise,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms),
    ),
  ]);
}

describe('the API under abuse', () => {
  it('answers every generated request with an OpenAI-shaped 4xx or a whole reply, and the next request still works', async () => {
    await fc.assert(
      fc.asyncProperty(abusiveRequest, async (request) => {
        const got = await within(stack.api.fetch(toRequest(request)).then(answer), 5000);
        expect(faultIn(got, request.reply), JSON.stringify(request).slice(0, 500)).toBeNull();
        const next = await within(stack.api.fetch(chatRequest(echoBody('still fine'))), 5000);
        expect(next.status).toBe(200);
        await next.text();
      }),
      { numRuns: 400 },
    );
    expect(stack.server.openPorts).toBe(0);
    // 400 requests and 400 more: each must answer within 5 s (a hang), the whole takes longer
    // than vitest's default 5 s on a busy two-core machine.
  }, 60_000);
});

describe('the abuse checker', () => {
  const ok = { status: 200, contentType: 'application/json', requestId: 'req_1' };
  it.each([
    ['a 500', { ...ok, status: 500, text: '{}' }],
    ['no request id', { ...ok, requestId: null, text: '{"object":"list"}' }],
    ['an error that is not JSON', { ...ok, status: 400, contentType: 'text/plain', text: 'bad' }],
    ['an error body of another shape', { ...ok, status: 400, text: '{"error":"bad"}' }],
    [
      'a stream cut before [DONE]',
      { ...ok, contentType: 'text/event-stream', text: 'data: {}\n\n' },
    ],
    [
      'a stream ending in an error event',
      { ...ok, contentType: 'text/event-stream', text: 'data: {"error":{}}\n\ndata: [DONE]\n\n' },
    ],
  ])('rejects %s', (_what, answer) => {
    expect(faultIn(answer)).not.toBeNull();
  });

  it('rejects a reply that does not give the hostile text back whole, and takes one that does', () => {
    const hostile = 'a\u2028</script>\ud800 "b"';
    const reply = echoExpectation(
      { model: 'hearth/echo', messages: [{ role: 'user', content: hostile }] },
      'hearth/echo',
    );
    const completion = (content: string) =>
      JSON.stringify({
        id: 'chatcmpl-1',
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: 'hearth/echo',
        choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 3, completion_tokens: 3, total_tokens: 6, estimated_cost: 0 },
      });
    expect(faultIn({ ...ok, text: completion('a\u2028</script>\ufffd "b"') }, reply)).toBeNull();
    expect(faultIn({ ...ok, text: completion('last') }, reply)).toMatch(/content/);
    expect(faultIn({ ...ok, text: completion('a </script>\ufffd "b"') }, reply)).toMatch(/content/);
  });
});

describe('extreme but valid requests', () => {
  it('answers 10,000 messages', async () => {
    const messages = Array.from({ length: 10_000 }, (_, i) => ({
      role: i % 2 === 0 ? 'user' : 'assistant',
      content: `message ${i}`,
    }));
    messages.push({ role: 'user', content: 'last' });
    const response = await stack.api.fetch(chatRequest({ model: 'hearth/echo', messages }));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ usage: { prompt_tokens: 20_000 + 1 } });
  });

  it('ignores a deeply nested value in a field it does not read', async () => {
    const depth = 100_000;
    const body = `{"model":"hearth/echo","messages":[{"role":"user","content":"hi"}],"metadata":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    const response = await stack.api.fetch(chatRequest(body));
    expect(response.status).toBe(200);
  });

  it('refuses a deeply nested value where it reads one, as a 400', async () => {
    const depth = 100_000;
    const body = `{"model":"hearth/echo","messages":[{"role":"user","content":${'['.repeat(depth)}${']'.repeat(depth)}}]}`;
    const response = await stack.api.fetch(chatRequest(body));
    expect(response.status).toBe(400);
  });
});
