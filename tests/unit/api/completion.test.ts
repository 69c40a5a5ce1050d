import { describe, expect, it } from 'vitest';
import {
  chunkBody,
  completionBody,
  ReplyAccumulator,
  SseReplyWriter,
  toUsage,
  usageChunkBody,
  type ReplyMeta,
} from '../../../src/api/completion';
import { sseEvent } from '../../../src/protocol/sse';

const meta: ReplyMeta = {
  id: 'chatcmpl-1',
  created: 1700000000,
  model: 'hearth/echo',
  include_usage: false,
};
const usage = toUsage({ prompt_tokens: 3, completion_tokens: 2 }, { prompt: 0, completion: 0 });

function events(text: string): unknown[] {
  return text
    .split('\n\n')
    .filter((e) => e !== '')
    .map((e) => {
      expect(e.startsWith('data: ')).toBe(true);
      const data = e.slice(6);
      return data === '[DONE]' ? data : JSON.parse(data);
    });
}

describe('toUsage', () => {
  it('adds the total and prices prompt and completion tokens separately', () => {
    expect(
      toUsage({ prompt_tokens: 1000, completion_tokens: 500 }, { prompt: 1e-6, completion: 4e-6 }),
    ).toEqual({
      prompt_tokens: 1000,
      completion_tokens: 500,
      total_tokens: 1500,
      estimated_cost: 0.001 + 0.002,
    });
  });
});

describe('completionBody', () => {
  it('has the OpenAI shape with one choice and usage', () => {
    expect(completionBody(meta, [{ content: 'hi', finish_reason: 'stop' }], usage)).toEqual({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1700000000,
      model: 'hearth/echo',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'hi', refusal: null },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5, estimated_cost: 0 },
    });
  });
});

describe('SseReplyWriter', () => {
  it('writes the role first, one chunk per token, the final chunk, then [DONE]', () => {
    const writer = new SseReplyWriter(meta);
    const text = writer.tokens(['a ', 'b']) + writer.tokens(['!']) + writer.end('length', usage);
    expect(events(text)).toEqual([
      chunkBody(meta, { role: 'assistant', content: 'a ' }, null),
      chunkBody(meta, { content: 'b' }, null),
      chunkBody(meta, { content: '!' }, null),
      chunkBody(meta, {}, 'length'),
      '[DONE]',
    ]);
  });

  it('writes the fast path byte for byte as the generic encoder would', () => {
    const writer = new SseReplyWriter({ ...meta, include_usage: true });
    writer.tokens(['first']);
    for (const token of ['plain', 'quo"te', 'new\nline', 'sep\u2028', '😀', '\uFFFD', '']) {
      expect(writer.tokens([token])).toBe(
        sseEvent(chunkBody({ ...meta, include_usage: true }, { content: token }, null)),
      );
    }
  });

  it('writes a batch straight to bytes exactly as encoding its text would', () => {
    // Two writers in step: one gives text, the other bytes.
    const m = { ...meta, model: 'gpu-box/modèle-ü' };
    const text = new SseReplyWriter(m);
    const bytes = new SseReplyWriter(m);
    const batches = [
      ['first ', 'é'],
      ['plain', 'quo"te', 'new\nline', 'sep\u2028', '😀 x', '\uFFFD', '', 'a\u0085b'],
      [{ text: 'why', reasoning: true }, 'then'],
      [{ text: 'p', logprobs: [{ token: 'p', logprob: -0.5, bytes: [112], top_logprobs: [] }] }],
      ['ascii '.repeat(500)],
    ];
    for (const batch of batches) {
      expect(bytes.tokenBytes(batch)).toEqual(new TextEncoder().encode(text.tokens(batch)));
    }
    expect(bytes.end('stop', usage)).toBe(text.end('stop', usage));
  });

  it('adds usage: null to every chunk and a usage chunk before [DONE] with include_usage', () => {
    const m = { ...meta, include_usage: true };
    const writer = new SseReplyWriter(m);
    const all = events(writer.tokens(['x']) + writer.end('stop', usage));
    expect(all).toEqual([
      { ...chunkBody(m, { role: 'assistant', content: 'x' }, null), usage: null },
      { ...chunkBody(m, {}, 'stop'), usage: null },
      usageChunkBody(m, usage),
      '[DONE]',
    ]);
    expect(all[2]).toMatchObject({ choices: [], usage });
  });

  it('opens an empty reply with the role and empty content', () => {
    const writer = new SseReplyWriter(meta);
    expect(events(writer.end('stop', usage))).toEqual([
      chunkBody(meta, { role: 'assistant', content: '' }, null),
      chunkBody(meta, {}, 'stop'),
      '[DONE]',
    ]);
  });
});

describe('replies of real models', () => {
  const logprob = { token: 'a', logprob: -0.5, bytes: [97], top_logprobs: [] };

  it('streams thinking as reasoning_content, the answer as content, and logprobs beside them', () => {
    const writer = new SseReplyWriter(meta);
    const text =
      writer.tokens([
        { text: 'Let me see', reasoning: true },
        { text: 'a', logprobs: [logprob] },
        'b',
      ]) + writer.end('stop', usage);
    expect(events(text)).toEqual([
      chunkBody(meta, { role: 'assistant', reasoning_content: 'Let me see' }, null),
      chunkBody(meta, { content: 'a' }, null, { content: [logprob], refusal: null }),
      chunkBody(meta, { content: 'b' }, null),
      chunkBody(meta, {}, 'stop'),
      '[DONE]',
    ]);
  });

  it('streams tool calls in one delta, indexed', () => {
    const call = {
      id: 'call_1',
      type: 'function' as const,
      function: { name: 'f', arguments: '{"x":1}' },
    };
    const writer = new SseReplyWriter(meta);
    expect(events(writer.toolCalls([call]) + writer.end('tool_calls', usage))).toEqual([
      chunkBody(meta, { role: 'assistant', tool_calls: [{ index: 0, ...call }] }, null),
      chunkBody(meta, {}, 'tool_calls'),
      '[DONE]',
    ]);
  });

  it('collects a non-streamed reply: content, reasoning, logprobs when asked, tool calls with null content', () => {
    const reply = new ReplyAccumulator();
    reply.tokens([{ text: 'hmm', reasoning: true }, { text: 'A', logprobs: [logprob] }, 'B']);
    const [choice] = reply.result('stop');
    expect(completionBody({ ...meta, logprobs: true }, [choice!], usage).choices[0]).toEqual({
      index: 0,
      message: { role: 'assistant', content: 'AB', reasoning_content: 'hmm', refusal: null },
      logprobs: { content: [logprob], refusal: null },
      finish_reason: 'stop',
    });
    const tools = new ReplyAccumulator();
    const call = {
      id: 'call_1',
      type: 'function' as const,
      function: { name: 'f', arguments: '{}' },
    };
    tools.toolCalls([call]);
    expect(completionBody(meta, tools.result('tool_calls'), usage).choices[0]).toEqual({
      index: 0,
      message: { role: 'assistant', content: null, tool_calls: [call], refusal: null },
      logprobs: null,
      finish_reason: 'tool_calls',
    });
  });

  it('writes several choices, indexed in order', () => {
    const reply = new ReplyAccumulator();
    reply.choices([
      { content: 'one', finish_reason: 'stop' },
      { content: 'two', finish_reason: 'length' },
    ]);
    const body = completionBody(meta, reply.result('stop'), usage);
    expect(body.choices.map((c) => [c.index, c.message.content, c.finish_reason])).toEqual([
      [0, 'one', 'stop'],
      [1, 'two', 'length'],
    ]);
  });
});

describe('speed figures', () => {
  it('go out as an SSE comment before [DONE], which parsers skip', async () => {
    const writer = new SseReplyWriter(meta);
    const speed = {
      prefill_tokens_per_s: 900,
      decode_tokens_per_s: 40.5,
      time_to_first_token_s: 0.2,
    };
    const text = writer.tokens(['a']) + writer.end('stop', usage, speed);
    expect(text).toContain(`\n\n: hearth-speed ${JSON.stringify(speed)}\n\ndata: [DONE]\n\n`);
    const { decodeSse } = await import('../../../src/protocol/sse');
    const stream = new Response(text).body!;
    const data: string[] = [];
    for await (const event of decodeSse(stream)) data.push(event.data);
    expect(data.some((d) => d.includes('hearth-speed') || d.includes('decode_tokens_per_s'))).toBe(
      false,
    );
  });
});
