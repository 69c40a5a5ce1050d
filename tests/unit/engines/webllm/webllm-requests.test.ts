/**
 * What Hearth's WebLLM engine makes of a request's sampling fields, on WebLLM 0.2.86's own
 * `MLCEngine` and its own random generator (./webllm-harness.ts): seeds, stop strings beside
 * tools, penalties and thinking, and the logprob entries that come back.
 */
import { describe, expect, it } from 'vitest';
import type { EngineOutput } from '../../../../src/engines/engine';
import {
  CALL,
  WEATHER,
  endOf,
  hermes,
  qwen3,
  request,
  run,
  setup,
  smol,
  textOf,
  useFakeAdapter,
} from './webllm-fixture';

useFakeAdapter();

const TOKENS = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta'];

/** A model whose first token is drawn from WebLLM's generator, as its sampler would. */
const drawn = {
  reply: (turn: { random: () => number }) => [TOKENS[Math.floor(turn.random() * 8)] ?? '?'],
};

const contentsOf = (outputs: EngineOutput[]) => {
  const choices = outputs.find((o) => o.type === 'choices');
  return choices?.type === 'choices' ? choices.choices.map((c) => c.content) : [];
};

const entriesOf = (outputs: EngineOutput[]) =>
  outputs.flatMap((o) => (o.type === 'token' ? (o.logprobs ?? []) : []));

describe('WebLLMEngine: seeds on WebLLM’s own generator', () => {
  it('gives the choices of a seeded request first draws far apart, and the same again', async () => {
    // The reply is the sampler's first draw, to four places.
    const { engine } = setup({ [smol.id]: { reply: (turn) => [turn.random().toFixed(4)] } });
    await engine.load(smol.id);
    const body = request(smol, { n: 4, seed: 42, temperature: 1 });
    const first = contentsOf(await run(engine, body));
    // Seeds 42…45 as they are draw 0.000944…0.001012 first: one first token for every choice.
    const draws = first.map(Number);
    expect(new Set(draws).size).toBe(4);
    expect(Math.max(...draws) - Math.min(...draws)).toBeGreaterThan(0.25);
    expect(contentsOf(await run(engine, body))).toEqual(first);
  });

  it('gives choices drawing the first token among eight not all the same token', async () => {
    const { engine } = setup({ [smol.id]: drawn });
    await engine.load(smol.id);
    const first = contentsOf(await run(engine, request(smol, { n: 4, seed: 42, temperature: 1 })));
    expect(new Set(first).size).toBeGreaterThan(1);
  });

  it.each([-1, -42, 0, 2 ** 31 - 1, 2 ** 31, Number.MAX_SAFE_INTEGER, -(2 ** 60), 1e30])(
    'takes the seed %d, which WebLLM’s generator would refuse or fold, and repeats its reply',
    async (seed) => {
      const { engine } = setup({ [smol.id]: drawn });
      await engine.load(smol.id);
      const body = request(smol, { seed, temperature: 1 });
      const once = await run(engine, body);
      expect(endOf(once).finish_reason).toBe('stop');
      expect(textOf(await run(engine, body))).toBe(textOf(once));
    },
  );

  it('does not give neighbouring seeds one and the same first token', async () => {
    const { engine } = setup({ [smol.id]: drawn });
    await engine.load(smol.id);
    const replies = new Set<string>();
    for (const seed of [1, 2, 3, 4, 5, 6]) {
      replies.add(textOf(await run(engine, request(smol, { seed, temperature: 1 }))));
    }
    expect(replies.size).toBeGreaterThan(1);
  });
});

describe('WebLLMEngine: stop strings beside tools', () => {
  it('calls a tool whose JSON holds a stop string, as stop strings do not apply to forced calls', async () => {
    const { engine } = setup({ [hermes.id]: { reply: () => [CALL] } });
    await engine.load(hermes.id);
    const outputs = await run(engine, request(hermes, { tools: [WEATHER], stop: ['Paris'] }));
    const calls = outputs.find((o) => o.type === 'tool_calls');
    expect(calls?.type === 'tool_calls' && calls.calls[0]?.function.arguments).toBe(
      '{"city":"Paris"}',
    );
    expect(endOf(outputs).finish_reason).toBe('tool_calls');
    // The next request still works.
    expect(endOf(await run(engine, request(hermes, { tools: [WEATHER] }))).finish_reason).toBe(
      'tool_calls',
    );
  });

  it('still stops at a stop string when tool_choice is none and the tools are not offered', async () => {
    const { engine } = setup({ [hermes.id]: { reply: () => ['Rain ', 'in ', 'Paris'] } });
    await engine.load(hermes.id);
    const body = request(hermes, { tools: [WEATHER], tool_choice: 'none', stop: ['Paris'] });
    expect(textOf(await run(engine, body))).toBe('Rain in ');
  });
});

describe('WebLLMEngine: logprobs with stop strings and thinking', () => {
  it('keeps the logprob entries of a cut character’s tokens when stop strings are set', async () => {
    // ab, then こ's first two bytes: max_tokens cuts the character, its tokens have no text.
    const reply = ['ab', { bytes: [0xe3] }, { bytes: [0x81] }];
    for (const stop of [undefined, ['zz']]) {
      const { engine } = setup({ [smol.id]: { reply: () => reply } });
      await engine.load(smol.id);
      const outputs = await run(engine, request(smol, { logprobs: true, max_tokens: 3, stop }));
      expect(textOf(outputs)).toBe('ab');
      expect(entriesOf(outputs)).toHaveLength(3);
    }
  });

  it('gives one logprob entry per token of a reply with thinking turned off', async () => {
    const { engine, harness } = setup({ [qwen3.id]: { reply: () => ['Hi', ' there'] } });
    await engine.load(qwen3.id);
    const outputs = await run(
      engine,
      request(qwen3, { logprobs: true, top_logprobs: 1, enable_thinking: false }),
    );
    expect(textOf(outputs)).toBe('Hi there');
    expect(entriesOf(outputs).map((e) => e.token)).toEqual(['Hi', ' there']);
    // WebLLM wrote the empty think block: the forwarding reached it.
    expect(harness.prompts[0]).toContain('<think>\n\n</think>');
  });
});

describe('WebLLMEngine: fields forwarded to WebLLM', () => {
  it('forwards repetition_penalty to WebLLM’s sampler', async () => {
    const { engine, harness } = setup({ [smol.id]: { reply: () => ['ok'] } });
    await engine.load(smol.id);
    await run(engine, request(smol, { repetition_penalty: 1.3 }));
    expect(harness.genConfigs[0]).toMatchObject({ repetition_penalty: 1.3 });
  });

  it('forwards enable_thinking: false to a reasoning model, which then writes an empty think block', async () => {
    const { engine, harness } = setup({ [qwen3.id]: { reply: () => ['ok'] } });
    await engine.load(qwen3.id);
    await run(engine, request(qwen3, { enable_thinking: false }));
    expect(harness.genConfigs[0]).toMatchObject({ enable_thinking: false });
    await run(engine, request(qwen3));
    expect(harness.prompts.filter((p) => p.includes('<think>\n\n</think>'))).toHaveLength(1);
  });
});
