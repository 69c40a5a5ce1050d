/**
 * file_search over the API as the service worker wires it (./documents-stack.ts): the Responses
 * API's tool (the search's item, the passages the model gets, citations, the events) and chat
 * completions' extension field.
 */
import { describe, expect, it } from 'vitest';
import { URL_BASE } from '../helpers';
import {
  call,
  GUIDE,
  settled,
  state,
  upload,
  useDocumentsStack,
  type Json,
} from './documents-stack';

useDocumentsStack();

describe('file_search in the Responses API', () => {
  async function storeWithGuide(): Promise<{ store: string; file: string }> {
    const file = await upload('guide.md', GUIDE, 'text/markdown');
    const { body } = await call('POST', 'vector_stores', { file_ids: [file] });
    await settled(body.id);
    return { store: body.id, file };
  }

  it('searches the stores on the last user message, gives the model the passages, and cites them', async () => {
    const { store, file } = await storeWithGuide();
    const { status, body } = await call('POST', 'responses', {
      model: 'hearth/echo',
      input: 'What is zanzibarite?',
      tools: [{ type: 'file_search', vector_store_ids: [store], max_num_results: 2 }],
      include: ['file_search_call.results'],
    });
    expect(status).toBe(200);
    const [searchCall, message] = body.output;
    expect(searchCall).toMatchObject({
      type: 'file_search_call',
      status: 'completed',
      queries: ['What is zanzibarite?'],
    });
    expect(searchCall.id).toMatch(/^fs_/);
    expect(searchCall.results[0]).toMatchObject({ file_id: file, filename: 'guide.md' });
    expect(searchCall.results[0].text).toContain('zanzibarite');
    // The echo engine says its system prompt in brackets: the numbered passages it was given.
    const part = message.content[0];
    expect(part.text).toContain('[1] guide.md, "Relay"');
    expect(part.text).toContain('zanzibarite');
    const cited = part.annotations[0];
    expect(cited).toMatchObject({ type: 'file_citation', file_id: file, filename: 'guide.md' });
    expect(part.text.slice(cited.index - 3, cited.index)).toBe('[1]');
  });

  it('streams the search’s events before the answer, and the citations as annotation events', async () => {
    const { store } = await storeWithGuide();
    const response = await state.api.fetch(
      new Request(`${URL_BASE}/v1/openai/responses`, {
        method: 'POST',
        headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'hearth/echo',
          stream: true,
          input: 'zanzibarite',
          tools: [{ type: 'file_search', vector_store_ids: [store] }],
        }),
      }),
    );
    const text = await response.text();
    const types = [...text.matchAll(/^event: (.+)$/gm)].map((m) => m[1]);
    expect(types.slice(0, 7)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.file_search_call.in_progress',
      'response.file_search_call.searching',
      'response.file_search_call.completed',
      'response.output_item.done',
    ]);
    expect(types).toContain('response.output_text.annotation.added');
    expect(types.at(-1)).toBe('response.completed');
  });

  it('names the tool’s vector_store_ids when a store is not kept, and searches nothing under tool_choice none', async () => {
    const missing = await call('POST', 'responses', {
      model: 'hearth/echo',
      input: 'x',
      tools: [{ type: 'file_search', vector_store_ids: ['vs_nope'] }],
    });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({
      code: 'vector_store_not_found',
      param: 'tools[0].vector_store_ids',
    });
    const none = await call('POST', 'responses', {
      model: 'hearth/echo',
      input: 'plain',
      tool_choice: 'none',
      tools: [{ type: 'file_search', vector_store_ids: ['vs_nope'] }],
    });
    expect(none.body.output).toMatchObject([{ type: 'message', content: [{ text: 'plain' }] }]);
  });
});

describe('file_search on chat completions (Hearth’s extension field)', () => {
  it('gives the model the passages, and the reply says what was found; a stream on its first chunk', async () => {
    const file = await upload('guide.md', GUIDE, 'text/markdown');
    const { body: store } = await call('POST', 'vector_stores', { file_ids: [file] });
    await settled(store.id);
    const request = {
      model: 'hearth/echo',
      messages: [{ role: 'user', content: 'zanzibarite' }],
      file_search: { vector_store_ids: [store.id], max_num_results: 1 },
    };
    const whole = await call('POST', 'chat/completions', request);
    expect(whole.status).toBe(200);
    expect(whole.body.file_search).toMatchObject({
      queries: ['zanzibarite'],
      results: [{ file_id: file, filename: 'guide.md', heading: 'Relay' }],
    });
    // The echo says its system prompt: the numbered passage it was given, then the question.
    expect(whole.body.choices[0].message.content).toMatch(/^\[Passages from .*\[1\] guide\.md/s);
    expect(whole.body.choices[0].message.content).toMatch(/\] zanzibarite$/);
    const streamed = await state.api.fetch(
      new Request(`${URL_BASE}/v1/openai/chat/completions`, {
        method: 'POST',
        headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
        body: JSON.stringify({ ...request, stream: true }),
      }),
    );
    const chunks = (await streamed.text())
      .split('\n\n')
      .filter((e) => e.startsWith('data: {'))
      .map((e) => JSON.parse(e.slice(6)) as Json);
    expect(chunks[0]?.file_search).toEqual(whole.body.file_search);
    expect(chunks.slice(1).some((c) => 'file_search' in c)).toBe(false);
  });

  it('names the field at fault, and the next request still works', async () => {
    const bad = await call('POST', 'chat/completions', {
      model: 'hearth/echo',
      messages: [{ role: 'user', content: 'x' }],
      file_search: { vector_store_ids: [] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('file_search.vector_store_ids');
    const missing = await call('POST', 'chat/completions', {
      model: 'hearth/echo',
      messages: [{ role: 'user', content: 'x' }],
      file_search: { vector_store_ids: ['vs_nope'] },
    });
    expect(missing.body.error).toMatchObject({
      code: 'vector_store_not_found',
      param: 'file_search.vector_store_ids',
    });
    const plain = await call('POST', 'chat/completions', {
      model: 'hearth/echo',
      messages: [{ role: 'user', content: 'still here' }],
    });
    expect(plain.body.choices[0].message.content).toBe('still here');
    expect('file_search' in plain.body).toBe(false);
  });
});

describe('an empty answer after a search', () => {
  it('is still a message with empty text after the file_search_call', async () => {
    const file = await upload('guide.md', GUIDE, 'text/markdown');
    const { body: store } = await call('POST', 'vector_stores', { file_ids: [file] });
    await settled(store.id);
    // The echo's reply starts with its system prompt in brackets: a stop at `[` leaves nothing.
    const { body } = await call('POST', 'responses', {
      model: 'hearth/echo',
      input: 'zanzibarite',
      stop: ['['],
      tools: [{ type: 'file_search', vector_store_ids: [store.id] }],
    });
    expect(body.output.map((item: Json) => item.type)).toEqual(['file_search_call', 'message']);
    expect(body.output[1].content[0].text).toBe('');
  });
});
