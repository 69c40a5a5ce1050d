// The server rows of `npm run bench`: a model on a server the user added (docs/servers.md "Servers you
// add"), read through Hearth (`/v1/openai/chat/completions` for `<server>/<model>`, which the
// service worker forwards, src/servers/upstream.ts) against the same server called directly from
// the same page with `fetch`, in the same run, alternating. The server is a small one started
// here in Node. Its model `fast` answers as fast as the socket takes the bytes, so that what is
// measured is what Hearth adds, not what a model costs: a flood of ~10^5 tokens/s that no model
// server produces, which shows what forwarding costs per token. Its models `paced-100` and
// `paced-2000` stream at 100 tokens/s (a fast GPU's single stream) and 2,000 tokens/s (more
// than any single stream of a real server): whether Hearth keeps up with a server's pace, and
// what it takes from it. Both ways send the same headers, so both need the
// same CORS preflight, which the server lets the browser keep (`Access-Control-Max-Age`) and the
// warm-up pays (`server_preflights` counts them). The direct request comes from a page the
// service worker controls, so it too passes the service worker's fetch event (which leaves it to
// the network): only answering it, and the second fetch, are Hearth's.
import { createServer } from 'node:http';
import { median, round } from './stats.mjs';

const KEY = 'Bearer bench';
/** The name the server is added under (`bench` is an organisation of the bench catalogue). */
export const SERVER_NAME = 'bench-server';
/** The model that streams as fast as the socket takes it. */
const UPSTREAM_MODEL = 'fast';
/** Models that stream at a fixed number of tokens a second, as a model server does. */
const PACED_MODELS = { 'paced-100': 100, 'paced-2000': 2_000 };
/** Every model the server lists. */
const UPSTREAM_MODELS = [UPSTREAM_MODEL, ...Object.keys(PACED_MODELS)];
/** The server's own key: Hearth sends it, and so does the direct request. */
const UPSTREAM_KEY = 'bench-upstream-key';
/** How long a browser may keep a preflight (Chromium keeps one at most 2 hours). */
const PREFLIGHT_MAX_AGE_S = 600;

/**
 * @typedef {object} ServerSizes
 * @property {number} ttfbRuns pairs of short streamed requests timed to their first token
 * @property {number} ttfbTokens tokens of each of those streams
 * @property {number} streamTokens tokens of the long stream (the flood)
 * @property {number} streamRuns pairs of long streams
 * @property {number} pacedSeconds how long each paced stream lasts
 * @property {number} pacedRuns pairs of streams of each paced model
 * @property {number} requestRuns pairs of non-streamed requests
 * @property {number} warmup requests each way before any timing
 */

/**
 * An OpenAI-compatible server on a free port of 127.0.0.1. `POST /v1/chat/completions` answers
 * `max_tokens` tokens (`w0 w1 …`): streamed, one SSE event per token, written as fast as the
 * socket takes them (a full socket buffer waits for 'drain') for `fast`, or each at its time
 * for the paced models; or as one JSON reply. CORS lets `origin` read it with `authorization`
 * and `content-type`, and lets it keep the preflight for 10 minutes.
 * @param {string} origin the bench pages' origin
 * @returns {Promise<{ baseUrl: string, preflights: () => number, close: () => Promise<void> }>}
 */
export async function startUpstream(origin) {
  const cors = {
    'access-control-allow-origin': origin,
    'access-control-allow-methods': 'GET, POST, OPTIONS',
    'access-control-allow-headers': 'authorization, content-type',
    'access-control-max-age': String(PREFLIGHT_MAX_AGE_S),
    vary: 'origin',
  };
  let preflights = 0;
  const server = createServer((req, res) => {
    /** @param {number} status @param {unknown} body */
    const json = (status, body) => {
      const text = JSON.stringify(body);
      res.writeHead(status, {
        ...cors,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(text),
      });
      res.end(text);
    };
    if (req.method === 'OPTIONS') {
      preflights += 1;
      res.writeHead(204, cors);
      res.end();
      return;
    }
    if (req.headers.authorization !== `Bearer ${UPSTREAM_KEY}`) {
      json(401, { error: { message: 'Invalid API key', type: 'invalid_request_error' } });
      return;
    }
    if (req.method === 'GET' && req.url === '/v1/models') {
      json(200, {
        object: 'list',
        data: UPSTREAM_MODELS.map((id) => ({ id, object: 'model', created: 0, owned_by: 'bench' })),
      });
      return;
    }
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      json(404, { error: { message: `No route ${req.method} ${req.url}` } });
      return;
    }
    /** @type {Buffer[]} */
    const parts = [];
    req.on('data', (part) => parts.push(part));
    req.on('end', () => {
      /** @type {{ model?: string, stream?: boolean, max_tokens?: number }} */
      const body = JSON.parse(Buffer.concat(parts).toString('utf8'));
      const tokens = body.max_tokens ?? 16;
      const model = body.model ?? UPSTREAM_MODEL;
      const id = `chatcmpl-up${Date.now().toString(36)}`;
      const created = Math.floor(Date.now() / 1000);
      const usage = { prompt_tokens: 8, completion_tokens: tokens, total_tokens: 8 + tokens };
      if (!body.stream) {
        let content = '';
        for (let i = 0; i < tokens; i += 1) content += `w${i} `;
        json(200, {
          id,
          object: 'chat.completion',
          created,
          model,
          choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'length' }],
          usage,
        });
        return;
      }
      const perSecond = PACED_MODELS[/** @type {keyof typeof PACED_MODELS} */ (model)];
      void streamTokens(res, { id, created, model, tokens, usage, cors, perSecond });
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('the bench server has no port');
  return {
    baseUrl: `http://127.0.0.1:${address.port}/v1`,
    preflights: () => preflights,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * One SSE event per token, as vLLM sends them (the role with the first), then the final chunk
 * and `[DONE]`; each `write` that fills the socket's buffer waits for 'drain'. Paced, token `i`
 * is due `i / perSecond` s after the first: a timer wakes for the next one due and writes every
 * token due by then, one event each (as a server whose steps came late), so that the rate holds
 * however coarse the timers are.
 * @param {import('node:http').ServerResponse} res
 * @param {{ id: string, created: number, model: string, tokens: number, usage: object, cors: Record<string, string>, perSecond: number | undefined }} reply
 */
async function streamTokens(res, { id, created, model, tokens, usage, cors, perSecond }) {
  res.writeHead(200, {
    ...cors,
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
  });
  let closed = false;
  res.on('close', () => {
    closed = true;
  });
  const head = `data: {"id":"${id}","object":"chat.completion.chunk","created":${created},"model":${JSON.stringify(model)},"choices":[{"index":0,"delta":{`;
  /** @param {string} text */
  const write = (text) =>
    res.write(text) ? undefined : new Promise((resolve) => res.once('drain', resolve));
  const started = performance.now();
  for (let i = 0; i < tokens && !closed; i += 1) {
    if (perSecond !== undefined) {
      const due = started + (i * 1000) / perSecond;
      const early = due - performance.now();
      if (early > 0) await new Promise((resolve) => setTimeout(resolve, early));
      if (closed) break;
    }
    const role = i === 0 ? '"role":"assistant",' : '';
    const wait = write(`${head}${role}"content":"w${i} "},"finish_reason":null}]}\n\n`);
    if (wait) await wait;
  }
  if (closed) return;
  const end = `data: {"id":"${id}","object":"chat.completion.chunk","created":${created},"model":${JSON.stringify(model)},"choices":[{"index":0,"delta":{},"finish_reason":"length"}],"usage":${JSON.stringify(usage)}}\n\ndata: [DONE]\n\n`;
  res.end(end);
}

/**
 * Calls the API from `page`; the reply's text, or throws with the status.
 * @param {import('playwright-core').Page} page
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 */
function call(page, method, path, body) {
  return page.evaluate(
    async ({ method, path, body, KEY }) => {
      const response = await fetch(path, {
        method,
        headers: { authorization: KEY, 'content-type': 'application/json' },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
      return text;
    },
    { method, path, body, KEY },
  );
}

/**
 * @typedef {object} Timed one request, timed in the page from the call to `fetch`
 * @property {number} first ms to the first body bytes that carry a token
 * @property {number} total ms to the end of the body
 * @property {boolean} complete whether the last token (`w<tokens - 1> `) was read
 */

/**
 * Rounds of one request through Hearth and the same directly, the order swapped every round so
 * that drift and the one that goes second hit both alike. Runs in the page, so that no round trip
 * to Node comes between the two. Both send the same headers (`authorization`, `content-type`),
 * so both need the same CORS preflight, kept by the browser (`Access-Control-Max-Age`) from the
 * warm-up on: the service worker's fetch to the server is cross-origin too. With `floor`, the
 * page is the floor's and "through Hearth" is through the floor's bare forwarding service worker
 * (bench/floor/floor-sw.ts) instead.
 * @param {import('playwright-core').Page} page
 * @param {{ baseUrl: string, upstream: string, tokens: number, stream: boolean, runs: number, warmup: number, floor?: boolean }} options
 * @returns {Promise<{ hearth: Timed[], direct: Timed[] }>}
 */
function rounds(page, { floor = false, ...options }) {
  return page.evaluate(
    async ({
      baseUrl,
      upstream,
      tokens,
      stream,
      runs,
      warmup,
      floor,
      KEY,
      UPSTREAM_KEY,
      SERVER_NAME,
    }) => {
      const messages = [{ role: 'user', content: 'Say many words.' }];
      const direct = `${baseUrl}/chat/completions`;
      // The floor's page is under its service worker's scope: `v1/forward` is the floor's.
      const through = floor
        ? {
            url: `v1/forward?to=${encodeURIComponent(direct)}`,
            model: upstream,
            authorization: `Bearer ${UPSTREAM_KEY}`,
          }
        : {
            url: '/v1/openai/chat/completions',
            model: `${SERVER_NAME}/${upstream}`,
            authorization: KEY,
          };
      /** @param {'hearth' | 'direct'} way @returns {Promise<Timed>} */
      const once = async (way) => {
        const hearth = way === 'hearth';
        const url = hearth ? through.url : direct;
        const body = JSON.stringify({
          model: hearth ? through.model : upstream,
          messages,
          max_tokens: tokens,
          stream,
        });
        const headers = {
          authorization: hearth ? through.authorization : `Bearer ${UPSTREAM_KEY}`,
          'content-type': 'application/json',
        };
        const started = performance.now();
        const response = await fetch(url, { method: 'POST', headers, body });
        if (!response.ok || !response.body) {
          throw new Error(`${way}: ${response.status} ${await response.text()}`);
        }
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        // The last token ends a delta (one event per token, or a batch of them) or the reply.
        const last = `w${tokens - 1} "`;
        let first = 0;
        let complete = false;
        let tail = '';
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          if (first === 0 && value.includes('"content":"w')) first = performance.now() - started;
          complete ||= (tail + value).includes(last);
          tail = value.slice(-last.length);
        }
        const total = performance.now() - started;
        if (first === 0) throw new Error(`${way}: no token in the reply`);
        return { first, total, complete };
      };
      for (let i = 0; i < warmup; i += 1) {
        await once('direct');
        await once('hearth');
      }
      /** @type {{ hearth: Timed[], direct: Timed[] }} */
      const out = { hearth: [], direct: [] };
      for (let r = 0; r < runs; r += 1) {
        /** @type {('hearth' | 'direct')[]} */
        const order = r % 2 === 0 ? ['direct', 'hearth'] : ['hearth', 'direct'];
        for (const way of order) out[way].push(await once(way));
      }
      return out;
    },
    { ...options, floor, KEY, UPSTREAM_KEY, SERVER_NAME },
  );
}

/**
 * Starts the server, adds it through `POST /v1/hearth/servers` from `page`, and measures time to
 * the first token (short streams), tokens per second (a long stream) and non-streamed requests,
 * through Hearth and directly; and, from `floorPage`, the first token and the flood through the
 * floor's bare forwarding service worker against the same server fetched directly from that
 * page (`server_*_floor_*`): what a service worker in the way costs here before Hearth does
 * anything. Keys: `server_*`.
 * @param {{ page: import('playwright-core').Page, floorPage: import('playwright-core').Page, origin: string, sizes: ServerSizes, log: (what: string) => void }} options
 * @returns {Promise<Record<string, number>>}
 */
export async function measureServers({ page, floorPage, origin, sizes, log }) {
  const upstream = await startUpstream(origin);
  try {
    log(`a server at ${upstream.baseUrl}, added as ${SERVER_NAME} through /v1/hearth/servers`);
    const added = JSON.parse(
      await call(page, 'POST', '/v1/hearth/servers', {
        name: SERVER_NAME,
        base_url: upstream.baseUrl,
        api_key: UPSTREAM_KEY,
      }),
    );
    if (!UPSTREAM_MODELS.every((m) => added.models?.includes(m))) {
      throw new Error(`the server was added without its models: ${JSON.stringify(added)}`);
    }
    const base = { baseUrl: upstream.baseUrl, upstream: UPSTREAM_MODEL };
    /** @type {Record<string, number>} */
    const results = {};

    log(`time to first token, ${sizes.ttfbRuns} pairs of ${sizes.ttfbTokens}-token streams`);
    const short = { ...base, tokens: sizes.ttfbTokens, stream: true, runs: sizes.ttfbRuns };
    const ttfb = await rounds(page, { ...short, warmup: sizes.warmup });
    results.server_ttfb_ms = round(median(ttfb.hearth.map((t) => t.first)));
    results.server_ttfb_direct_ms = round(median(ttfb.direct.map((t) => t.first)));
    // Each Hearth run is paired with the direct run beside it: the median of the differences is
    // steadier than the difference of the medians on a busy machine.
    /** @param {{ hearth: Timed[], direct: Timed[] }} timed */
    const addedMs = (timed) =>
      round(median(timed.hearth.map((t, i) => t.first - (timed.direct[i]?.first ?? NaN))));
    results.server_ttfb_added_ms = addedMs(ttfb);
    log(`the same through the floor's bare forwarding service worker`);
    results.server_ttfb_floor_added_ms = addedMs(
      await rounds(floorPage, { ...short, warmup: sizes.warmup, floor: true }),
    );

    /**
     * Tokens/s of whole streams of `upstream` (from the call to the last byte), through Hearth
     * and directly, and their ratio, as `<key>_tokens_per_s`, `<key>_direct_tokens_per_s` and
     * `<key>_ratio`.
     * @param {string} key
     * @param {{ upstream: string, tokens: number, runs: number, warmup: number, floor?: boolean }} what
     */
    const streams = async (key, { upstream: model, tokens, runs, warmup, floor = false }) => {
      const long = await rounds(floor ? floorPage : page, {
        floor,
        ...base,
        upstream: model,
        tokens,
        stream: true,
        runs,
        warmup,
      });
      for (const [way, timed] of Object.entries(long)) {
        if (!timed.every((run) => run.complete)) throw new Error(`${way}: a stream was cut short`);
      }
      /** @param {Timed} t */
      const perSecond = (t) => tokens / (t.total / 1000);
      const hearth = Math.round(median(long.hearth.map(perSecond)));
      const direct = Math.round(median(long.direct.map(perSecond)));
      results[`${key}_ratio`] = round(hearth / direct, 3);
      if (floor) return;
      results[`${key}_tokens_per_s`] = hearth;
      results[`${key}_direct_tokens_per_s`] = direct;
    };

    // Paced as a model server streams: both ways should take the server's own time.
    for (const [paced, rate] of Object.entries(PACED_MODELS)) {
      const tokens = Math.round(rate * sizes.pacedSeconds);
      log(`${tokens}-token streams at ${rate} tokens/s, ${sizes.pacedRuns} pairs`);
      await streams(`server_stream_${rate}`, {
        upstream: paced,
        tokens,
        runs: sizes.pacedRuns,
        warmup: 0,
      });
    }

    log(
      `a ${sizes.streamTokens}-token flood (as fast as the socket takes it), ${sizes.streamRuns} pairs`,
    );
    const flood = { upstream: UPSTREAM_MODEL, tokens: sizes.streamTokens, runs: sizes.streamRuns };
    await streams('server_stream_flood', { ...flood, warmup: 1 });
    log(`the same through the floor's bare forwarding service worker`);
    await streams('server_stream_flood_floor', { ...flood, warmup: 1, floor: true });

    log(`non-streamed requests of ${sizes.ttfbTokens} tokens, ${sizes.requestRuns} pairs`);
    const whole = await rounds(page, {
      ...base,
      tokens: sizes.ttfbTokens,
      stream: false,
      runs: sizes.requestRuns,
      warmup: sizes.warmup,
    });
    results.server_request_ms = round(median(whole.hearth.map((t) => t.total)));
    results.server_request_direct_ms = round(median(whole.direct.map((t) => t.total)));
    results.server_request_added_ms = round(
      median(whole.hearth.map((t, i) => t.total - (whole.direct[i]?.total ?? NaN))),
    );
    // Both ways' preflights (the page's and the service worker's), warm-ups included: a few
    // when the browser keeps them, one per request when it does not.
    results.server_preflights = upstream.preflights();
    return results;
  } finally {
    await upstream.close();
  }
}

/** @type {[string, string, ((v: number) => boolean) | null, string][]} */
export const SERVER_TARGETS = [
  [
    'server_ttfb_added_ms',
    "time to first token added by Hearth to a server's stream, ms (median of paired differences)",
    (v) => v <= 2,
    '≤ 2',
  ],
  [
    'server_ttfb_floor_added_ms',
    "the same added by the floor: a bare service worker that only forwards (the platform's share)",
    null,
    '',
  ],
  ['server_ttfb_ms', 'time to first token of a server model through Hearth, ms', null, ''],
  ['server_ttfb_direct_ms', 'the same, the server fetched directly from the page, ms', null, ''],
  ...Object.values(PACED_MODELS).flatMap(
    (rate) =>
      /** @type {[string, string, ((v: number) => boolean) | null, string][]} */ ([
        [
          `server_stream_${rate}_ratio`,
          `tokens/s of a server streaming ${rate} tokens/s, through Hearth ÷ directly`,
          (v) => v >= 0.98,
          '≥ 0.98',
        ],
        [
          `server_stream_${rate}_tokens_per_s`,
          'the same stream through Hearth, tokens/s',
          null,
          '',
        ],
        [
          `server_stream_${rate}_direct_tokens_per_s`,
          'the same, fetched directly from the page',
          null,
          '',
        ],
      ]),
  ),
  [
    'server_stream_flood_ratio',
    'tokens/s of a flood (as fast as the socket takes it: no model server does), Hearth ÷ directly',
    (v) => v >= 0.98,
    '≥ 0.98',
  ],
  [
    'server_stream_flood_floor_ratio',
    'the flood through the floor (a bare service worker that only forwards) ÷ directly',
    null,
    '',
  ],
  ['server_stream_flood_tokens_per_s', 'the flood through Hearth, tokens/s', null, ''],
  ['server_stream_flood_direct_tokens_per_s', 'the same, fetched directly from the page', null, ''],
  [
    'server_request_added_ms',
    'time Hearth adds to a non-streamed server request, ms (median of paired differences)',
    null,
    '',
  ],
  ['server_request_ms', 'non-streamed server request through Hearth, ms', null, ''],
  ['server_request_direct_ms', 'the same, fetched directly from the page, ms', null, ''],
  [
    'server_preflights',
    'CORS preflights the server saw in all these rows (both ways, warm-ups included)',
    null,
    '',
  ],
];
