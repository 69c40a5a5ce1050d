/**
 * The fixture GGUF (scripts/fixture-gguf.mjs) as the tabs, fault, relay, UI and offline suites use
 * it: downloaded from the tests' model server, loaded by llama.cpp in the engine worker, and asked
 * with plain fetch from a page. Whatever the prompt and the sampler it answers FIXTURE_SENTENCE,
 * one piece a token; with `ignore_eos` it goes on round the sentence for as long as `max_tokens`.
 */
import { expect, type Page } from '@playwright/test';
import { FIXTURE_PIECES } from '../../scripts/fixture-gguf.mjs';
import { streamRequest } from './helpers';

export { FIXTURE_PIECES, FIXTURE_SENTENCE } from '../../scripts/fixture-gguf.mjs';

/** The catalogue's fixture model (fixtures/models.json). */
export const FIXTURE_ID = 'e2e/fixture-GGUF:F32';
/** The file the model server serves it from, as `ModelServer.ggufRequests` names it. */
export const FIXTURE_PATH = '/gguf/llama-fixture.gguf';
/**
 * The fixture's variants (FIXTURE_VARIANTS): one whose template offers tools Hermes-style and
 * whose reply is a call of `get_weather`, and one that thinks between `<think>` tags first.
 */
export const TOOLS_FIXTURE_ID = 'e2e/fixture-tools-GGUF:F32';
export const THINKING_FIXTURE_ID = 'e2e/fixture-thinking-GGUF:F32';
/** The sentence's tokens as llama.cpp counts them: one a piece, and the end of the turn. */
export const SENTENCE_TOKENS = FIXTURE_PIECES.length + 1;

/** The embedding fixture (fixtureEmbeddingGguf), whose vectors tests compute themselves. */
export const EMBEDDING_FIXTURE_ID = 'e2e/fixture-embed-GGUF:F32';

/**
 * Downloads a fixture model (the chat fixture unless `model` says) from a page of the app (with
 * `key`), and checks it is done.
 */
export async function downloadFixture(page: Page, key = 'k', model = FIXTURE_ID): Promise<void> {
  const phase = await page.evaluate(
    async ({ id, key }) => {
      const response = await fetch(`v1/hearth/models/${id}/download`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ stream: false }),
      });
      return ((await response.json()) as { phase?: string }).phase;
    },
    { id: model, key },
  );
  expect(phase).toBe('done');
}

/** A chat-completion reply as the fixture tests read it. */
export interface FixtureReply {
  status: number;
  content: string | undefined;
  finish_reason: string | undefined;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | undefined;
  error: { code: string } | undefined;
}

/** A non-streamed request of the fixture model from `page`, with `extra` fields. */
export function askFixture(page: Page, extra: Record<string, unknown> = {}): Promise<FixtureReply> {
  return page.evaluate(
    async ({ id, extra }) => {
      const response = await fetch('v1/openai/chat/completions', {
        method: 'POST',
        headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
        body: JSON.stringify({
          model: id,
          messages: [{ role: 'user', content: 'Tell me something.' }],
          ...extra,
        }),
      });
      const body = (await response.json()) as {
        choices?: { message: { content: string }; finish_reason: string }[];
        usage?: FixtureReply['usage'];
        error?: { code: string };
      };
      return {
        status: response.status,
        content: body.choices?.[0]?.message.content,
        finish_reason: body.choices?.[0]?.finish_reason,
        usage: body.usage,
        error: body.error,
      };
    },
    { id: FIXTURE_ID, extra },
  );
}

/**
 * Streams a reply of the fixture model in `page` with plain fetch (helpers.ts's `streamRequest`:
 * the events, when each came, and `globalThis.streamed`).
 */
export function streamFixture(page: Page, extra: Record<string, unknown> = {}) {
  return streamRequest(page, {
    model: FIXTURE_ID,
    messages: [{ role: 'user', content: 'Tell me something.' }],
    ...extra,
  });
}
