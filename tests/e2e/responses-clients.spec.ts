/**
 * The Responses API from outside the browser, as the clients of 2026 call it: through the relay
 * (`hearth-relay`, a tab of the app paired by its link), the Vercel AI SDK's `@ai-sdk/openai`
 * provider (`openai(modelId)` sends `/responses`), the OpenAI Agents SDK running a tool loop on the
 * echo engine's deterministic calls (`/call <name> <JSON>`, docs/api.md), a plain Node `fetch`
 * (JSON and SSE, stored responses read and deleted), a model of a server the user added
 * (tests/e2e/upstream-server.ts, which Hearth asks in chat completions), and Codex CLI
 * (`@openai/codex`, its native binary from the npm package) with a `CODEX_HOME` of its own whose
 * config.toml points at the relay with `wire_api = "responses"`. The tab is paired once for the
 * file. Chromium only: these are Node clients of the relay; the page's side of the Responses API
 * runs in both browsers in responses.spec.ts, and the relay's pairing in relay.spec.ts.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, type Page } from '@playwright/test';
import { createOpenAI } from '@ai-sdk/openai';
import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool } from '@openai/agents';
import { generateText, streamText } from 'ai';
import OpenAI from 'openai';
import { pairTab, startRelay, type RunningRelay } from './relay';
import { UPSTREAM_MODELS, UpstreamServer, echoTokens, upstreamBase } from './upstream-server';
import { endSuite, lendToSuite, test } from './warm-context';

const upstream = new UpstreamServer();
let relay: RunningRelay;
let page: Page;

/** Hearth's id of the server's chat model, and the server's own. */
const UPSTREAM_CHAT = UPSTREAM_MODELS.vllm.chat;
const CHAT = `box/${UPSTREAM_CHAT}`;

/** Echo tokens in `text`. */
const count = (text: string) => echoTokens(text).length;

test.beforeAll(async ({ browser, browserName, warmContexts }, testInfo) => {
  test.skip(
    browserName !== 'chromium',
    'Node clients of the relay: the browser the paired tab runs in is tested by responses.spec.ts',
  );
  await upstream.start();
  relay = await startRelay(testInfo.project.use.baseURL ?? '');
  page = await lendToSuite({ browser, warmContexts }, testInfo);
  await pairTab(page, relay);
  // The pairing made issued keys the rule: the tab adds the server with the relay's key.
  const added = await page.evaluate(
    async ({ base, key }) => {
      const response = await fetch('v1/hearth/servers', {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'box', base_url: base }),
      });
      return { status: response.status, body: (await response.json()) as unknown };
    },
    { base: upstreamBase('vllm'), key: relay.key },
  );
  expect(added.status, JSON.stringify(added.body)).toBe(201);
});

test.afterAll(async ({ warmContexts }) => {
  await endSuite(warmContexts);
  await relay?.stop();
  await upstream.stop();
});

test.beforeEach(() => upstream.reset());

/** The usage of an echo reply of `input` and `output` tokens, as the Responses API counts it. */
function echoUsage(input: number, output: number) {
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + output,
    estimated_cost: 0,
  };
}

test('the AI SDK’s openai() provider through the relay: generateText and streamText get the echo over the Responses API, with usage', async () => {
  const openai = createOpenAI({ baseURL: relay.sdkBaseUrl, apiKey: relay.key });
  const prompt = 'hello from the AI SDK';
  const whole = await generateText({
    model: openai('hearth/echo'),
    system: 'Be brief.',
    prompt,
    maxRetries: 0,
  });
  expect(whole.text).toBe(`[Be brief.] ${prompt}`);
  expect(whole.finishReason).toBe('stop');
  expect([whole.usage.inputTokens, whole.usage.outputTokens]).toEqual([2 + 5, 2 + 5]);
  expect(whole.response.modelId).toBe('hearth/echo');
  // The Responses API's own id: the provider did not fall back to chat completions.
  expect(whole.providerMetadata?.openai?.responseId).toMatch(/^resp_/);

  const streamed = streamText({ model: openai('hearth/echo'), prompt, maxRetries: 0 });
  const parts: string[] = [];
  for await (const part of streamed.textStream) parts.push(part);
  expect(parts).toEqual(echoTokens(prompt));
  expect(await streamed.text).toBe(prompt);
  expect(await streamed.finishReason).toBe('stop');
  const usage = await streamed.usage;
  expect([usage.inputTokens, usage.outputTokens]).toEqual([5, 5]);
  expect((await streamed.providerMetadata)?.openai?.responseId).toMatch(/^resp_/);
});

test('the OpenAI Agents SDK through the relay runs a tool loop: the echo calls the tool, and the tool’s output is the final answer', async () => {
  setTracingDisabled(true);
  const calls: unknown[] = [];
  const getWeather = tool({
    name: 'get_weather',
    description: 'The weather in a city.',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
      additionalProperties: false,
    },
    strict: true,
    execute: (input) => {
      calls.push(input);
      return `Sunny in ${(input as { city: string }).city}`;
    },
  });
  const agent = new Agent({
    name: 'Weather',
    instructions: 'You report the weather.',
    model: 'hearth/echo',
    tools: [getWeather],
  });
  const runner = new Runner({
    modelProvider: new OpenAIProvider({
      baseURL: relay.sdkBaseUrl,
      apiKey: relay.key,
      useResponses: true,
    }),
    tracingDisabled: true,
  });
  const result = await runner.run(agent, '/call get_weather {"city":"Paris"}');
  expect(calls).toEqual([{ city: 'Paris' }]);
  expect(result.finalOutput).toBe('[You report the weather.] Sunny in Paris');
  const items = result.newItems.map((item) => item.type);
  expect(items).toEqual(['tool_call_item', 'tool_call_output_item', 'message_output_item']);
  const called = result.newItems[0]!.rawItem as { callId?: string; name?: string };
  expect(called).toMatchObject({ callId: 'call_echo_0', name: 'get_weather' });
});

test('a plain Node fetch through the relay: JSON and SSE (event: and data: lines, numbered from 0, no [DONE]), then the stored response read, listed and deleted, on /v1/openai and /v1', async () => {
  const headers = { authorization: `Bearer ${relay.key}`, 'content-type': 'application/json' };
  const post = (base: string, body: unknown) =>
    fetch(`${base}/responses`, { method: 'POST', headers, body: JSON.stringify(body) });

  const whole = await post(relay.sdkBaseUrl, { model: 'hearth/echo', input: 'from plain fetch' });
  expect(whole.status).toBe(200);
  expect(whole.headers.get('content-type')).toMatch(/^application\/json/);
  const response = (await whole.json()) as { id: string; output: unknown[]; usage: unknown };
  expect(response).toMatchObject({
    object: 'response',
    status: 'completed',
    model: 'hearth/echo',
    output: [
      {
        type: 'message',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'from plain fetch', annotations: [] }],
      },
    ],
    usage: echoUsage(3, 3),
  });
  expect(response.id).toMatch(/^resp_/);

  const stream = await post(relay.baseUrl, {
    model: 'hearth/echo',
    input: 'streamed through the alias',
    stream: true,
  });
  expect(stream.status).toBe(200);
  expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const body = await stream.text();
  expect(body).not.toContain('[DONE]');
  const events = body
    .split('\n\n')
    .filter((block) => block !== '')
    .map((block) => {
      const match = /^event: (\S+)\ndata: (.+)$/.exec(block);
      expect(match, block).not.toBeNull();
      const data = JSON.parse(match![2]!) as { type: string; sequence_number: number };
      expect(data.type).toBe(match![1]);
      return data as { type: string; sequence_number: number; delta?: string };
    });
  expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
  expect(events.map((e) => e.type)).toEqual([
    'response.created',
    'response.in_progress',
    'response.output_item.added',
    'response.content_part.added',
    ...Array<string>(count('streamed through the alias')).fill('response.output_text.delta'),
    'response.output_text.done',
    'response.content_part.done',
    'response.output_item.done',
    'response.completed',
  ]);
  expect(events.flatMap((e) => (e.delta === undefined ? [] : [e.delta])).join('')).toBe(
    'streamed through the alias',
  );

  const read = await fetch(`${relay.sdkBaseUrl}/responses/${response.id}`, { headers });
  expect(read.status).toBe(200);
  expect(await read.json()).toEqual(response);
  const items = await fetch(`${relay.baseUrl}/responses/${response.id}/input_items`, {
    headers,
  });
  expect(items.status).toBe(200);
  // The items' shape is responses.spec.ts's to check; here, that the relay reads the list.
  const list = (await items.json()) as {
    object: string;
    data: { type: string; role: string; content: unknown }[];
    has_more: boolean;
  };
  expect(list).toMatchObject({ object: 'list', data: [{ type: 'message', role: 'user' }] });
  expect(JSON.stringify(list.data[0]!.content)).toContain('from plain fetch');
  expect(list.has_more).toBe(false);
  const deleted = await fetch(`${relay.sdkBaseUrl}/responses/${response.id}`, {
    method: 'DELETE',
    headers,
  });
  expect(deleted.status).toBe(200);
  expect(await deleted.json()).toEqual({ id: response.id, object: 'response', deleted: true });
  const gone = await fetch(`${relay.sdkBaseUrl}/responses/${response.id}`, { headers });
  expect(gone.status).toBe(404);
  expect(((await gone.json()) as { error: { message: string } }).error.message).toContain(
    response.id,
  );
});

test('a model of a server the user added answers through /responses, whole and streamed, and the server is asked in chat completions under its own id', async () => {
  const client = new OpenAI({ baseURL: relay.sdkBaseUrl, apiKey: relay.key, maxRetries: 0 });
  const prompt = 'hello from a server model';
  const whole = await client.responses.create({
    model: CHAT,
    instructions: 'Be brief.',
    input: prompt,
  });
  expect(whole).toMatchObject({
    object: 'response',
    status: 'completed',
    model: CHAT,
    output_text: `[Be brief.] ${prompt}`,
    usage: {
      input_tokens: 2 + count(prompt),
      output_tokens: 2 + count(prompt),
      total_tokens: 2 * (2 + count(prompt)),
    },
  });
  const asked = upstream.last('/chat/completions')?.body as
    { model: string; messages: { role: string; content: unknown }[] } | undefined;
  expect(asked?.model).toBe(UPSTREAM_CHAT);
  // The text of each message the server got, whether its content is a string or text parts.
  const textOf = (content: unknown) =>
    Array.isArray(content)
      ? content.map((part: { text?: string }) => part.text ?? '').join('')
      : content;
  expect(asked?.messages.map((m) => [m.role, textOf(m.content)])).toEqual([
    ['system', 'Be brief.'],
    ['user', prompt],
  ]);

  const stream = client.responses.stream({ model: CHAT, input: prompt });
  const deltas: string[] = [];
  for await (const event of stream) {
    if (event.type === 'response.output_text.delta') deltas.push(event.delta);
  }
  const final = await stream.finalResponse();
  expect(deltas.join('')).toBe(prompt);
  expect(final).toMatchObject({ status: 'completed', model: CHAT, output_text: prompt });
  expect(final.usage).toMatchObject({ input_tokens: count(prompt), output_tokens: count(prompt) });
  const sent = upstream.of('/chat/completions');
  expect(sent.map((r) => [r.body?.model, r.body?.stream ?? false])).toEqual([
    [UPSTREAM_CHAT, false],
    [UPSTREAM_CHAT, true],
  ]);
  expect(upstream.of('/responses')).toEqual([]);
});

/** The `codex` launcher of the `@openai/codex` package, which runs its native binary. */
function codexBin(): string {
  const require = createRequire(import.meta.url);
  const manifest = require.resolve('@openai/codex/package.json');
  const { bin } = require(manifest) as { bin: Record<string, string> };
  return join(manifest, '..', bin.codex!);
}

/** Runs `codex` with `args` and `env` added, in `cwd`; resolves with its exit code and output. */
function runCodex(args: string[], env: Record<string, string>, cwd: string) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [codexBin(), ...args], {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (part: Buffer) => (stdout += part.toString()));
    child.stderr.on('data', (part: Buffer) => (stderr += part.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

test('Codex CLI, configured for the relay with wire_api = "responses", is answered by the echo in the tab: it exits 0 and prints the prompt as the final message', async () => {
  const home = await mkdtemp(join(tmpdir(), 'hearth-codex-'));
  try {
    await writeFile(
      join(home, 'config.toml'),
      [
        'model = "hearth/echo"',
        'model_provider = "hearth"',
        '[model_providers.hearth]',
        'name = "Hearth"',
        `base_url = "${relay.sdkBaseUrl}"`,
        'env_key = "HEARTH_KEY"',
        'wire_api = "responses"',
        '',
      ].join('\n'),
    );
    const prompt = 'Say hello to the tab.';
    const codex = await runCodex(
      ['exec', '--skip-git-repo-check', prompt],
      { CODEX_HOME: home, HEARTH_KEY: relay.key },
      home,
    );
    expect(codex.code, codex.stderr).toBe(0);
    // The echo: Codex's developer instructions in brackets, then the prompt.
    const answer = codex.stdout.trim();
    expect(answer.startsWith('['), answer.slice(0, 200)).toBe(true);
    expect(answer.endsWith(`] ${prompt}`), answer.slice(-200)).toBe(true);
  } finally {
    await rm(home, { recursive: true, force: true });
  }
});
