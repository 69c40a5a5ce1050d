// The Responses rows of `npm run bench` (issue 45): a Responses stream
// (`POST /v1/openai/responses`, `response.output_text.delta` events) against a chat-completions
// stream (`POST /v1/openai/chat/completions`) of the same echo reply, read by the same page in the
// same run, the two taking turns. What is compared is tokens: for chat, the `data:` events that
// carry content; for Responses, the `response.output_text.delta` events. Both carry one token
// each, so events/s of these is tokens/s of the same reply; the events around them (chat's final
// chunk and `[DONE]`, the Responses lifecycle events) are read but not counted, and their time is
// in both. The bytes of each stream (and of its token events) and each way's bytes/s over the same
// runs are rows too: a bytes/s ratio near 1 says the Responses path costs nothing per byte beyond
// chat's, whatever the two formats' sizes.
import { median, round } from './stats.mjs';

const KEY = 'Bearer bench';

/**
 * @typedef {object} ResponsesSizes
 * @property {number} tokens tokens of each stream (echo: one a word)
 * @property {number} runs pairs of streams (one of each endpoint, taking turns)
 * @property {number} ttftRuns pairs of first-token measurements
 */

const words = (/** @type {number} */ n) => Array.from({ length: n }, (_, i) => `w${i}`).join(' ');

/**
 * Times one streamed reply of `content` through `kind`'s endpoint, read with `fetch`, and counts
 * its token events; in the page.
 * @param {import('playwright-core').Page} page
 * @param {string} origin
 * @param {'chat' | 'responses'} kind
 * @param {string} content
 * @param {boolean} store a Responses request's `store` (chat keeps nothing)
 */
function streamOnce(page, origin, kind, content, store) {
  return page.evaluate(
    async ({ origin, kind, content, store, KEY }) => {
      const chat = kind === 'chat';
      const body = chat
        ? { model: 'hearth/echo', messages: [{ role: 'user', content }], stream: true }
        : { model: 'hearth/echo', input: content, stream: true, store };
      // A token's event: chat's chunks with content (the first carries the role too); the
      // Responses text deltas.
      const isToken = chat
        ? (/** @type {string} */ e) => e.startsWith('data: {') && e.includes('"content":')
        : (/** @type {string} */ e) => e.startsWith('event: response.output_text.delta\n');
      const started = performance.now();
      const response = await fetch(
        `${origin}/v1/openai/${chat ? 'chat/completions' : 'responses'}`,
        {
          method: 'POST',
          headers: { authorization: KEY, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        },
      );
      if (response.status !== 200) throw new Error(`${kind}: status ${response.status}`);
      if (!response.body) throw new Error(`${kind}: no body`);
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      // The clock runs while the page reads and splits the stream into events, the same work
      // for both; which events carry a token is told after it stops.
      const chunks = [];
      let events = 0;
      let tail = '';
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        chunks.push(value);
        const text = tail + value;
        let from = 0;
        let at = text.indexOf('\n\n');
        while (at !== -1) {
          events += 1;
          from = at + 2;
          at = text.indexOf('\n\n', from);
        }
        tail = text.slice(from);
      }
      const seconds = (performance.now() - started) / 1000;
      const all = chunks.join('').split('\n\n');
      if (all.pop() !== '' || all.length !== events) throw new Error(`${kind}: a torn stream`);
      const tokenEvents = all.filter(isToken);
      const tokens = tokenEvents.length;
      // Bytes of the token events, each with its blank line.
      const tokenBytes = tokenEvents.reduce((n, e) => n + e.length + 2, 0);
      const bytes = chunks.join('').length;
      return {
        tokens,
        events,
        bytes,
        tokenBytes,
        perSecond: tokens / seconds,
        bytesPerSecond: bytes / seconds,
      };
    },
    { origin, kind, content, store, KEY },
  );
}

/**
 * Milliseconds from a streamed request of `kind` to its first token's event read by the page, at
 * `echo_delay_ms: 10`, `runs` times each, taking turns; each run after a small request of the same
 * endpoint, so that the service worker is awake (as the API's first-token row measures).
 * @param {import('playwright-core').Page} page
 * @param {string} origin
 * @param {number} runs
 */
function firstTokens(page, origin, runs) {
  return page.evaluate(
    async ({ origin, runs, KEY }) => {
      const headers = { authorization: KEY, 'content-type': 'application/json' };
      const ways = {
        chat: {
          url: `${origin}/v1/openai/chat/completions`,
          warm: { model: 'hearth/echo', messages: [{ role: 'user', content: 'w' }] },
          body: {
            model: 'hearth/echo',
            messages: [{ role: 'user', content: 'a b c' }],
            stream: true,
            echo_delay_ms: 10,
          },
          token: '"content":',
        },
        responses: {
          url: `${origin}/v1/openai/responses`,
          warm: { model: 'hearth/echo', input: 'w', store: false },
          body: {
            model: 'hearth/echo',
            input: 'a b c',
            stream: true,
            store: false,
            echo_delay_ms: 10,
          },
          token: 'event: response.output_text.delta\n',
        },
      };
      /** @param {'chat' | 'responses'} kind */
      const once = async (kind) => {
        const way = ways[kind];
        await (
          await fetch(way.url, { method: 'POST', headers, body: JSON.stringify(way.warm) })
        ).text();
        const abort = new AbortController();
        const started = performance.now();
        const response = await fetch(way.url, {
          method: 'POST',
          signal: abort.signal,
          headers,
          body: JSON.stringify(way.body),
        });
        if (!response.body) throw new Error(`${kind}: no body`);
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        // The Responses events before the first token may come in a read of their own: read on
        // to the first token's event, for both.
        let text = '';
        while (!text.includes(way.token)) {
          const { done, value } = await reader.read();
          if (done) throw new Error(`${kind}: the stream ended before its first token`);
          text += value;
        }
        const elapsed = performance.now() - started;
        abort.abort();
        // Let the cancelled request wind down before the next measurement.
        await new Promise((resolve) => setTimeout(resolve, 20));
        return elapsed;
      };
      const chat = [];
      const responses = [];
      for (let r = 0; r < runs; r += 1) {
        // Taking turns, each first in every other pair.
        if (r % 2 === 0) {
          chat.push(await once('chat'));
          responses.push(await once('responses'));
        } else {
          responses.push(await once('responses'));
          chat.push(await once('chat'));
        }
      }
      return { chat, responses };
    },
    { origin, runs, KEY },
  );
}

/**
 * The Responses rows.
 * @param {{ page: import('playwright-core').Page, origin: string, sizes: ResponsesSizes,
 *   log: (what: string) => void }} options
 */
export async function measureResponses({ page, origin, sizes, log }) {
  const content = words(sizes.tokens);
  // Both warmed up (the service worker's code paths, the engine worker, the store).
  for (const kind of /** @type {const} */ (['chat', 'responses'])) {
    await streamOnce(page, origin, kind, words(1000), true);
  }
  log(
    `a ${sizes.tokens}-token reply streamed as chat completions and as Responses, ${sizes.runs} times each, taking turns`,
  );
  /** Tokens/s of each way's runs: chat, Responses, Responses with `store: false`. */
  const rates = {
    chat: /** @type {number[]} */ ([]),
    responses: /** @type {number[]} */ ([]),
    unstored: /** @type {number[]} */ ([]),
  };
  const { chat, responses, unstored } = rates;
  /** Bytes/s of each way's runs, the same runs. */
  const byteRates = {
    chat: /** @type {number[]} */ ([]),
    responses: /** @type {number[]} */ ([]),
    unstored: /** @type {number[]} */ ([]),
  };
  /** The bytes of each way's stream, as the page read them (UTF-16 units, all ASCII here). */
  const bytes = { chat: 0, responses: 0, unstored: 0 };
  /** The bytes of each way's token events (deltas; chat's content chunks). */
  const tokenBytes = { chat: 0, responses: 0, unstored: 0 };
  for (let r = 0; r < sizes.runs; r += 1) {
    // Each endpoint first in every other round, so that neither always follows the other.
    /** @type {('chat' | 'responses' | 'unstored')[]} */
    const order =
      r % 2 === 0 ? ['chat', 'responses', 'unstored'] : ['unstored', 'responses', 'chat'];
    for (const way of order) {
      const kind = way === 'chat' ? 'chat' : 'responses';
      const run = await streamOnce(page, origin, kind, content, way !== 'unstored');
      if (run.tokens !== sizes.tokens) {
        throw new Error(`${way}: ${run.tokens} token events for ${sizes.tokens} tokens`);
      }
      rates[way].push(run.perSecond);
      byteRates[way].push(run.bytesPerSecond);
      bytes[way] = run.bytes;
      tokenBytes[way] = run.tokenBytes;
    }
  }
  /** @type {Record<string, number>} */
  const results = {};
  results.responses_stream_tokens_per_s = Math.round(median(responses));
  results.responses_chat_stream_tokens_per_s = Math.round(median(chat));
  results.responses_stream_ratio = round(
    results.responses_stream_tokens_per_s / results.responses_chat_stream_tokens_per_s,
    3,
  );
  results.responses_unstored_stream_ratio = round(
    median(unstored) / results.responses_chat_stream_tokens_per_s,
    3,
  );

  // The evidence for the events/s ratio: the bytes of each stream, and bytes/s (≈ 1 if the
  // Responses path costs nothing per byte beyond chat's).
  results.responses_stream_bytes = bytes.responses;
  results.responses_unstored_stream_bytes = bytes.unstored;
  results.responses_chat_stream_bytes = bytes.chat;
  results.responses_bytes_ratio = round(bytes.responses / bytes.chat, 3);
  results.responses_delta_event_bytes = round(tokenBytes.responses / sizes.tokens, 1);
  results.responses_chat_token_event_bytes = round(tokenBytes.chat / sizes.tokens, 1);
  results.responses_other_bytes = bytes.responses - tokenBytes.responses;
  results.responses_chat_other_bytes = bytes.chat - tokenBytes.chat;
  results.responses_expected_stream_ratio = round(bytes.chat / bytes.responses, 3);
  results.responses_stream_mb_per_s = round(median(byteRates.responses) / 1e6, 1);
  results.responses_unstored_stream_mb_per_s = round(median(byteRates.unstored) / 1e6, 1);
  results.responses_chat_stream_mb_per_s = round(median(byteRates.chat) / 1e6, 1);
  results.responses_bytes_per_s_ratio = round(
    median(byteRates.responses) / median(byteRates.chat),
    3,
  );
  results.responses_unstored_bytes_per_s_ratio = round(
    median(byteRates.unstored) / median(byteRates.chat),
    3,
  );
  // Each round's own ratios: steadier than a ratio of medians while other work runs.
  results.responses_unstored_stream_ratio_paired = round(
    median(unstored.map((x, i) => x / (chat[i] ?? NaN))),
    3,
  );
  results.responses_unstored_bytes_per_s_ratio_paired = round(
    median(byteRates.unstored.map((x, i) => x / (byteRates.chat[i] ?? NaN))),
    3,
  );

  log(`time to first token, Responses and chat, at echo_delay_ms 10, ${sizes.ttftRuns} times each`);
  const ttft = await firstTokens(page, origin, sizes.ttftRuns);
  results.responses_ttft_ms = round(median(ttft.responses));
  results.responses_chat_ttft_ms = round(median(ttft.chat));
  // Each Responses run paired with the chat run beside it: the median of the differences is
  // steadier than the difference of the medians on a busy machine.
  results.responses_ttft_added_ms = round(
    median(ttft.responses.map((t, i) => t - (ttft.chat[i] ?? NaN))),
  );
  // Each round's own ratio: steadier than the ratio of medians while other work runs.
  results.responses_stream_ratio_paired = round(
    median(responses.map((x, i) => x / (chat[i] ?? NaN))),
    3,
  );
  const samples = {
    bytes,
    tokens_per_s: {
      chat: chat.map(Math.round),
      responses: responses.map(Math.round),
      unstored: unstored.map(Math.round),
    },
    ttft_ms: {
      chat: ttft.chat.map((t) => round(t)),
      responses: ttft.responses.map((t) => round(t)),
    },
  };
  return { ...results, responses_samples: samples };
}

/** @type {[string, string, ((v: number) => boolean) | null, string][]} */
export const RESPONSES_TARGETS = [
  [
    'responses_stream_ratio',
    'tokens/s of one reply streamed as Responses ÷ as chat completions (medians)',
    (v) => v >= 0.95,
    '≥ 0.95',
  ],
  [
    'responses_stream_ratio_paired',
    'the same ratio, the median of each round’s own (steadier on a busy machine)',
    null,
    '',
  ],
  ['responses_stream_tokens_per_s', 'Responses output_text.delta events/s (store: true)', null, ''],
  ['responses_chat_stream_tokens_per_s', 'chat content events/s of the same reply', null, ''],
  ['responses_unstored_stream_ratio', 'the same ratio with store: false (nothing kept)', null, ''],
  [
    'responses_unstored_stream_ratio_paired',
    'the same, store: false, the median of each round’s own',
    null,
    '',
  ],
  ['responses_stream_bytes', 'bytes of the Responses stream (store: true)', null, ''],
  ['responses_unstored_stream_bytes', 'bytes of the Responses stream (store: false)', null, ''],
  ['responses_chat_stream_bytes', 'bytes of the chat stream of the same reply', null, ''],
  ['responses_bytes_ratio', 'Responses bytes ÷ chat bytes', null, ''],
  ['responses_delta_event_bytes', 'bytes of a Responses output_text.delta event (mean)', null, ''],
  ['responses_chat_token_event_bytes', 'bytes of a chat content chunk (mean)', null, ''],
  [
    'responses_other_bytes',
    'bytes of the Responses stream’s other events (lifecycle, the closing events’ text)',
    null,
    '',
  ],
  ['responses_chat_other_bytes', 'bytes of the chat stream’s other events', null, ''],
  [
    'responses_expected_stream_ratio',
    'chat bytes ÷ Responses bytes: the events/s ratio if both moved the same bytes/s',
    null,
    '',
  ],
  [
    'responses_bytes_per_s_ratio',
    'bytes/s of the Responses stream ÷ of chat’s (store: true; ≈ 1: no cost per byte beyond chat’s)',
    null,
    '',
  ],
  ['responses_unstored_bytes_per_s_ratio', 'the same with store: false', null, ''],
  [
    'responses_unstored_bytes_per_s_ratio_paired',
    'the same, store: false, the median of each round’s own',
    null,
    '',
  ],
  ['responses_stream_mb_per_s', 'Responses stream, MB/s (store: true)', null, ''],
  ['responses_unstored_stream_mb_per_s', 'Responses stream, MB/s (store: false)', null, ''],
  ['responses_chat_stream_mb_per_s', 'chat stream, MB/s', null, ''],
  [
    'responses_ttft_added_ms',
    'time to first token, Responses minus chat, ms (median of paired differences)',
    (v) => v <= 1,
    '≤ +1',
  ],
  ['responses_ttft_ms', 'time to first token through Responses, ms', null, ''],
  ['responses_chat_ttft_ms', 'the same through chat completions, ms', null, ''],
];
