/**
 * Signs of life from WebLLM's own work (./webllm-harness.ts runs WebLLM 0.2.86's engine): a
 * request is kept alive by the prefill chunks and tokens the engine computes, not only by the
 * text it releases, so a long prefill or a reply to tools (held back whole) outlives the
 * first-token and stall limits while the engine works. The clock is a fake one that each step
 * moves on.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { EngineOutput } from '../../../../src/engines/engine';
import {
  CALL,
  WEATHER,
  endOf,
  hermes,
  request,
  run,
  setup,
  smol,
  textOf,
  useFakeAdapter,
} from './webllm-fixture';

useFakeAdapter();

let now = 1_700_000_000_000;
/** Makes `Date.now()` a clock that only the test moves. */
function fakeClock(): (ms: number) => void {
  vi.spyOn(Date, 'now').mockImplementation(() => now);
  return (ms) => {
    now += ms;
  };
}
afterEach(() => {
  vi.restoreAllMocks();
});

/** The types of the outputs before the first that is not progress, and after. */
const typesOf = (outputs: EngineOutput[]) => outputs.map((o) => o.type);

describe('WebLLMEngine: progress while nothing is released', () => {
  it('says it is alive while WebLLM decodes a reply to tools that goes out whole', async () => {
    const tick = fakeClock();
    // The call's JSON, a character a token: 57 tokens of 500 ms each, none of them released.
    const { engine } = setup({
      [hermes.id]: { reply: () => [...CALL], onToken: () => tick(500) },
    });
    await engine.load(hermes.id);
    const outputs = await run(engine, request(hermes, { tools: [WEATHER] }));
    const types = typesOf(outputs);
    const progress = types.filter((t) => t === 'progress').length;
    // About one a second of the 28 s of decoding, all before the calls.
    expect(progress).toBeGreaterThanOrEqual(20);
    expect(types.slice(progress)).toEqual(['tool_calls', 'end']);
    expect(endOf(outputs).finish_reason).toBe('tool_calls');
  });

  it('says it is alive while WebLLM prefills a long prompt, before the first token', async () => {
    const tick = fakeClock();
    const { engine } = setup({
      [smol.id]: {
        reply: () => ['ok'],
        // Small prefill chunks, each taking 2 s.
        chatConfig: { prefill_chunk_size: 16 },
        onForward: (_, length) => length > 1 && tick(2000),
      },
    });
    await engine.load(smol.id);
    const long = [{ role: 'user', content: 'a long prompt '.repeat(20) }];
    const outputs = await run(engine, request(smol, { messages: long }));
    const types = typesOf(outputs);
    const first = types.indexOf('token');
    expect(first).toBeGreaterThanOrEqual(5);
    expect(types.slice(0, first).every((t) => t === 'progress')).toBe(true);
    expect(textOf(outputs)).toBe('ok');
  });

  it('sends no progress while tokens flow', async () => {
    const tick = fakeClock();
    const { engine } = setup({
      [smol.id]: { reply: () => ['a', 'b', 'c', 'd'], onToken: () => tick(1500) },
    });
    await engine.load(smol.id);
    const outputs = await run(engine, request(smol));
    expect(typesOf(outputs)).toEqual(['token', 'token', 'token', 'token', 'end']);
  });
});
