/**
 * The official `openai` SDK running in a page of the app, configured as a user would, against
 * the SDK base URL and against `{origin}/v1` (the alias gateways use).
 */
import { expect } from '@playwright/test';
import { sharedAppTest } from './warm-context';

// Every test here calls the API through the SDK: one page of the app serves them all.
const test = sharedAppTest();

/**
 * What the `/v1` alias must show, in Chromium: that each kind of call reaches the same handlers.
 * The rest (stops, limits, queue, aborts) is the same code once routed, and runs on the main
 * base URL only.
 */
const ALIAS_CASES = new Set([
  'gets a non-streamed completion',
  'streams a completion chunk by chunk, with usage when asked',
  'lists and retrieves models',
  'raises the SDK error classes for 400, 401 and 404',
]);

for (const suffix of ['v1/openai', 'v1']) {
  test.describe(`the openai SDK with baseURL {origin}{base}${suffix}`, () => {
    test.beforeEach(async ({ page, browserName }, testInfo) => {
      test.skip(
        suffix === 'v1' && (browserName === 'firefox' || !ALIAS_CASES.has(testInfo.title)),
        'the /v1 alias is the same routing in the service worker in every browser: Chromium runs one call of each kind on it',
      );
      await page.evaluate((suffix) => {
        const baseURL = new URL(suffix, location.href).href;
        (globalThis as Record<string, unknown>).client = new OpenAI({
          baseURL,
          apiKey: 'sk-local',
          dangerouslyAllowBrowser: true,
        });
      }, suffix);
    });

    test('gets a non-streamed completion', async ({ page }) => {
      const completion = await page.evaluate(async () => {
        const c = await client.chat.completions.create({
          model: 'hearth/echo',
          messages: [{ role: 'user', content: 'Hello from the page' }],
        });
        return { ...c, request_id: c._request_id };
      });
      expect(completion).toMatchObject({
        object: 'chat.completion',
        model: 'hearth/echo',
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: 'Hello from the page' },
            finish_reason: 'stop',
          },
        ],
        usage: { prompt_tokens: 4, completion_tokens: 4, total_tokens: 8, estimated_cost: 0 },
      });
      expect(completion.id).toMatch(/^chatcmpl-/);
      expect(completion.request_id).toMatch(/^req_/);
    });

    test('streams a completion chunk by chunk, with usage when asked', async ({ page }) => {
      const result = await page.evaluate(async () => {
        const stream = await client.chat.completions.create({
          model: 'hearth/echo',
          messages: [{ role: 'user', content: 'one two three' }],
          stream: true,
          stream_options: { include_usage: true },
        });
        const chunks = [];
        for await (const chunk of stream) chunks.push(chunk);
        return chunks;
      });
      const contents = result.flatMap((c) => c.choices.map((ch) => ch.delta.content ?? ''));
      expect(contents.join('')).toBe('one two three');
      expect(result[0]?.choices[0]?.delta).toEqual({ role: 'assistant', content: 'one ' });
      expect(result.at(-2)?.choices[0]).toMatchObject({ delta: {}, finish_reason: 'stop' });
      expect(result.at(-1)).toMatchObject({
        choices: [],
        usage: { prompt_tokens: 3, completion_tokens: 3, total_tokens: 6 },
      });
      expect(new Set(result.map((c) => c.id)).size).toBe(1);
    });

    test('accumulates a stream with the SDK helper into the same message', async ({ page }) => {
      const message = await page.evaluate(async () => {
        const runner = client.chat.completions.stream({
          model: 'hearth/echo',
          messages: [{ role: 'user', content: 'stream helper works' }],
        });
        return (await runner.finalChatCompletion()).choices[0]?.message.content;
      });
      expect(message).toBe('stream helper works');
    });

    test('stops at max_tokens with finish_reason length', async ({ page }) => {
      const choice = await page.evaluate(async () => {
        const c = await client.chat.completions.create({
          model: 'hearth/echo',
          messages: [{ role: 'user', content: 'a b c d e' }],
          max_tokens: 2,
        });
        return c.choices[0];
      });
      expect(choice).toMatchObject({ message: { content: 'a b ' }, finish_reason: 'length' });
    });

    test('cuts the reply at a stop string', async ({ page }) => {
      const content = await page.evaluate(async () => {
        const c = await client.chat.completions.create({
          model: 'hearth/echo',
          messages: [{ role: 'user', content: 'keep this STOP not this' }],
          stop: ['STOP'],
        });
        return c.choices[0]?.message.content;
      });
      expect(content).toBe('keep this ');
    });

    test('shapes the reply with a system message', async ({ page }) => {
      const content = await page.evaluate(async () => {
        const c = await client.chat.completions.create({
          model: 'hearth/echo',
          messages: [
            { role: 'system', content: 'You are terse.' },
            { role: 'user', content: 'hi' },
          ],
        });
        return c.choices[0]?.message.content;
      });
      expect(content).toBe('[You are terse.] hi');
    });

    test('counts a multi-turn history in prompt_tokens', async ({ page }) => {
      const usage = await page.evaluate(async () => {
        const c = await client.chat.completions.create({
          model: 'hearth/echo',
          messages: [
            { role: 'user', content: 'first question here' },
            { role: 'assistant', content: 'first answer' },
            { role: 'user', content: 'second' },
          ],
        });
        return c.usage;
      });
      expect(usage).toMatchObject({ prompt_tokens: 3 + 2 + 1, completion_tokens: 1 });
    });

    test('lists and retrieves models, and retrieves no model the list leaves out', async ({
      page,
    }) => {
      const models = await page.evaluate(async () => {
        const list = [];
        for await (const model of client.models.list()) list.push(model);
        // A catalogue model, not downloaded: the list leaves it out, and so does retrieve.
        const absent = await client.models
          .retrieve('mlc-ai/SmolLM2-360M-Instruct-q4f32_1-MLC')
          .catch((e: InstanceType<typeof OpenAI.APIError>) => ({
            name: e.constructor.name,
            status: e.status,
            code: e.code,
          }));
        return { list, one: await client.models.retrieve('hearth/echo'), absent };
      });
      expect(models.list.map((m) => m.id)).toContain('hearth/echo');
      expect(models.list.map((m) => m.id)).not.toContain(
        'mlc-ai/SmolLM2-360M-Instruct-q4f32_1-MLC',
      );
      expect(models.one).toMatchObject({ id: 'hearth/echo', object: 'model', owned_by: 'hearth' });
      expect(models.absent).toEqual({
        name: 'NotFoundError',
        status: 404,
        code: 'model_not_found',
      });
    });

    test('raises the SDK error classes for 400, 401 and 404', async ({ page }) => {
      const errors = await page.evaluate(async (suffix) => {
        const describe = (e: unknown) => {
          const err = e as InstanceType<typeof OpenAI.APIError>;
          return {
            name: err.constructor.name,
            status: err.status,
            code: err.code,
            param: err.param,
          };
        };
        const bad = await client.chat.completions
          .create({
            model: 'hearth/echo',
            messages: [{ role: 'user', content: 'x' }],
            temperature: 7,
          })
          .catch(describe);
        const unknown = await client.chat.completions
          .create({ model: 'acme/none', messages: [{ role: 'user', content: 'x' }] })
          .catch(describe);
        const missing = await client.models.retrieve('acme/none').catch(describe);
        // The SDK insists on a key; removing its header is how a caller ends up without one.
        const noKey = new OpenAI({
          baseURL: new URL(suffix, location.href).href,
          apiKey: 'unused',
          defaultHeaders: { Authorization: null },
          dangerouslyAllowBrowser: true,
        });
        const unauth = await noKey.models.list().catch(describe);
        return {
          bad,
          unknown,
          missing,
          unauth,
          isBadRequest: (await client.chat.completions
            .create({ model: 'hearth/echo', messages: [] })
            .catch((e: unknown) => e instanceof OpenAI.BadRequestError)) as boolean,
        };
      }, suffix);
      expect(errors.bad).toEqual({
        name: 'BadRequestError',
        status: 400,
        code: 'invalid_value',
        param: 'temperature',
      });
      expect(errors.unknown).toEqual({
        name: 'NotFoundError',
        status: 404,
        code: 'model_not_found',
        param: 'model',
      });
      expect(errors.missing).toMatchObject({ name: 'NotFoundError', status: 404 });
      expect(errors.unauth).toMatchObject({
        name: 'AuthenticationError',
        status: 401,
        code: 'invalid_api_key',
      });
      expect(errors.isBadRequest).toBe(true);
    });

    test('raises RateLimitError when the queue is full', async ({ page }) => {
      const result = await page.evaluate(async () => {
        const body = (content: string, delay: number) =>
          ({
            model: 'hearth/echo',
            messages: [{ role: 'user', content }],
            echo_delay_ms: delay,
          }) as Parameters<typeof client.chat.completions.create>[0] & { stream?: false };
        const status = async () => {
          const response = await fetch('v1/hearth/status', {
            headers: { authorization: 'Bearer sk-local' },
          });
          return (await response.json()) as {
            queue: { running: number; waiting: number };
            open_ports: number;
          };
        };
        // The queue must start empty: what an earlier test aborted may still be on its way out.
        for (const deadline = Date.now() + 10_000; Date.now() < deadline;) {
          const { queue } = await status();
          if (queue.running + queue.waiting === 0) break;
          await new Promise((r) => setTimeout(r, 50));
        }
        const abort = new AbortController();
        const opts = { signal: abort.signal, maxRetries: 0 };
        // One running (slow: a minute unless aborted), 32 waiting behind it: the queue is full.
        const slow = Array.from({ length: 60 }, (_, i) => `w${i}`).join(' ');
        const held = [client.chat.completions.create(body(slow, 1000), opts)];
        // The slow one running before the rest are sent: sent together, they may reach the
        // worker in any order (Firefox), and a quick one that ran first leaves a place free.
        for (const deadline = Date.now() + 10_000; Date.now() < deadline;) {
          if ((await status()).queue.running === 1) break;
          await new Promise((r) => setTimeout(r, 20));
        }
        for (let i = 0; i < 32; i += 1)
          held.push(client.chat.completions.create(body(`q${i}`, 0), opts));
        // What has already settled, and how, says where a missing request went if one is missing.
        const settled: string[] = [];
        held.forEach((request, i) =>
          request.then(
            () => settled.push(`${i}: answered`),
            (e: Error & { status?: number }) => settled.push(`${i}: ${e.status} ${e.message}`),
          ),
        );
        // Until all 32 wait: Firefox under load can take seconds to hand them all to the
        // service worker, so neither a fixed pause nor a short head request will do.
        let waiting = 0;
        let last = await status();
        for (const deadline = Date.now() + 30_000; waiting < 32 && Date.now() < deadline;) {
          await new Promise((r) => setTimeout(r, 50));
          last = await status();
          waiting = last.queue.waiting;
        }
        if (waiting < 32) {
          abort.abort();
          return {
            name: `only ${waiting} waiting after 30 s (queue ${JSON.stringify(last.queue)}, ${last.open_ports} ports open; settled: ${settled.join('; ') || 'none'})`,
            status: 0,
            code: '',
            retryAfter: null,
          };
        }
        const refused = await client.chat.completions
          .create(body('one too many', 0), { maxRetries: 0 })
          .then(
            () => ({ name: 'none', status: 0, code: '', retryAfter: null as string | null }),
            (e: InstanceType<typeof OpenAI.APIError>) => ({
              name: e.constructor.name,
              status: e.status,
              code: e.code,
              retryAfter: e.headers?.get('retry-after') ?? null,
            }),
          );
        abort.abort();
        await Promise.allSettled(held);
        return refused;
      });
      expect(result).toEqual({
        name: 'RateLimitError',
        status: 429,
        code: 'queue_full',
        retryAfter: '5',
      });
    });

    test('aborts a stream midway, and the next request completes at once', async ({ page }) => {
      const result = await page.evaluate(async () => {
        const abort = new AbortController();
        const stream = await client.chat.completions.create(
          {
            model: 'hearth/echo',
            messages: [
              { role: 'user', content: Array.from({ length: 100 }, (_, i) => `w${i}`).join(' ') },
            ],
            stream: true,
            echo_delay_ms: 100,
          } as Parameters<typeof client.chat.completions.create>[0] & { stream: true },
          { signal: abort.signal },
        );
        let received = 0;
        for await (const _chunk of stream) {
          received += 1;
          if (received === 3) abort.abort();
        }
        // The aborted stream would run 10 more seconds; the next request must not wait for it.
        const started = performance.now();
        const next = await client.chat.completions.create({
          model: 'hearth/echo',
          messages: [{ role: 'user', content: 'next' }],
        });
        return {
          received,
          next: next.choices[0]?.message.content,
          waitedMs: performance.now() - started,
        };
      });
      expect(result.received).toBe(3);
      expect(result.next).toBe('next');
      expect(result.waitedMs).toBeLessThan(5_000);
    });

    test('aborts a queued request: it never runs to completion and does not delay the next', async ({
      page,
    }) => {
      const result = await page.evaluate(async () => {
        type Body = Parameters<typeof client.chat.completions.create>[0] & { stream?: false };
        const running = client.chat.completions.create({
          model: 'hearth/echo',
          messages: [{ role: 'user', content: 'a b c d e' }],
          echo_delay_ms: 100,
        } as Body);
        const abort = new AbortController();
        // 100 tokens at 1 s each: if this ran to completion the test would time out.
        const queued = client.chat.completions
          .create(
            {
              model: 'hearth/echo',
              messages: [
                { role: 'user', content: Array.from({ length: 100 }, () => 'x').join(' ') },
              ],
              echo_delay_ms: 1000,
            } as Body,
            { signal: abort.signal, maxRetries: 0 },
          )
          .then(
            () => 'completed',
            (e: Error) => e.constructor.name,
          );
        await new Promise((r) => setTimeout(r, 100));
        abort.abort();
        const after = await client.chat.completions.create({
          model: 'hearth/echo',
          messages: [{ role: 'user', content: 'after' }],
        });
        return {
          running: (await running).choices[0]?.message.content,
          queued: await queued,
          after: after.choices[0]?.message.content,
        };
      });
      expect(result).toEqual({ running: 'a b c d e', queued: 'APIUserAbortError', after: 'after' });
      // Nothing is left running or waiting once the aborted request has been dropped.
      await expect
        .poll(() =>
          page.evaluate(async () => {
            const r = await fetch('v1/hearth/status', { headers: { authorization: 'Bearer k' } });
            const s = (await r.json()) as { queue: unknown; open_ports: number };
            return { queue: s.queue, open_ports: s.open_ports };
          }),
        )
        .toEqual({ queue: { running: 0, waiting: 0 }, open_ports: 0 });
    });
  });
}

test.describe('images through the openai SDK', () => {
  test.beforeEach(async ({ page }) => {
    await page.evaluate(() => {
      (globalThis as Record<string, unknown>).client = new OpenAI({
        baseURL: new URL('v1/openai', location.href).href,
        apiKey: 'sk-local',
        dangerouslyAllowBrowser: true,
      });
    });
  });

  test('a PNG, a JPEG and a WebP drawn in the page reach the engine, decoded and measured', async ({
    page,
  }) => {
    const result = await page.evaluate(async () => {
      const canvas = new OffscreenCanvas(32, 16);
      const context = canvas.getContext('2d')!;
      context.fillStyle = '#c33';
      context.fillRect(0, 0, 32, 16);
      const files = await Promise.all(
        ['image/png', 'image/jpeg', 'image/webp'].map((type) => canvas.convertToBlob({ type })),
      );
      const urls = await Promise.all(
        files.map(
          (file) =>
            new Promise<string>((resolve) => {
              const reader = new FileReader();
              reader.onload = () => resolve(reader.result as string);
              reader.readAsDataURL(file);
            }),
        ),
      );
      const completion = await client.chat.completions.create({
        model: 'hearth/echo',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'which is red?' },
              ...urls.map((url) => ({ type: 'image_url' as const, image_url: { url } })),
            ],
          },
        ],
      });
      return {
        reply: completion.choices[0]?.message.content,
        files: files.map((file) => ({ type: file.type, size: file.size })),
      };
    });
    expect(result.reply).toBe(
      [
        'which is red?',
        ...result.files.map((f) => `[image: ${f.type} 32×16, ${f.size} bytes]`),
      ].join('\n'),
    );
  });

  test('an image of the app’s own origin is read by its URL', async ({ page }) => {
    const reply = await page.evaluate(async () => {
      const url = new URL('icons/icon-192.png', location.href).href;
      const size = (await (await fetch(url)).arrayBuffer()).byteLength;
      const completion = await client.chat.completions.create({
        model: 'hearth/echo',
        messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url } }] }],
      });
      return { text: completion.choices[0]?.message.content, size };
    });
    expect(reply.text).toBe(`[image: image/png 192×192, ${reply.size} bytes]`);
  });

  test('a damaged image and one on another site are 400s naming their part, and the next request works', async ({
    page,
  }) => {
    const result = await page.evaluate(async () => {
      const describe = (e: unknown) => {
        const err = e as InstanceType<typeof OpenAI.APIError>;
        return {
          name: err.constructor.name,
          status: err.status,
          param: err.param,
          message: err.message,
        };
      };
      // A real PNG cut short: its header says 64×64, its pixels are missing.
      const canvas = new OffscreenCanvas(64, 64);
      canvas.getContext('2d')!.fillRect(0, 0, 64, 64);
      const png = await canvas.convertToBlob({ type: 'image/png' });
      const cut = new Uint8Array(await png.arrayBuffer()).slice(0, 40);
      const damaged = `data:image/png;base64,${btoa(String.fromCharCode(...cut))}`;
      const ask = (url: string) =>
        client.chat.completions.create({
          model: 'hearth/echo',
          messages: [
            { role: 'user', content: 'first' },
            {
              role: 'user',
              content: [
                { type: 'text', text: 'x' },
                { type: 'image_url', image_url: { url } },
              ],
            },
          ],
        });
      const broken = await ask(damaged).then(() => null, describe);
      const remote = await ask('https://example.com/cat.png').then(() => null, describe);
      const next = await client.chat.completions.create({
        model: 'hearth/echo',
        messages: [{ role: 'user', content: 'still here' }],
      });
      return { broken, remote, next: next.choices[0]?.message.content };
    });
    expect(result.broken).toMatchObject({
      name: 'BadRequestError',
      status: 400,
      param: 'messages[1].content[1]',
    });
    expect(result.broken?.message).toContain('could not be decoded');
    expect(result.remote).toMatchObject({
      name: 'BadRequestError',
      status: 400,
      param: 'messages[1].content[1].image_url.url',
    });
    expect(result.remote?.message).toContain('nothing leaves it');
    expect(result.next).toBe('still here');
  });
});

declare global {
  var client: InstanceType<typeof OpenAI>;
}
