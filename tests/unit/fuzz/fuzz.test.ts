/**
 * The fuzz suite against the API (src/api and what it imports) in Node: the API the service worker runs, over the port
 * bridge, the queue and the echo engine (helpers.ts `echoStack`), with models that are known but
 * not downloaded or that this device cannot run. Every case is checked against the oracle
 * (tests/fuzz/oracle.ts); a failure names the seed and the case, and `FUZZ_SEED` reproduces it.
 */
import { afterAll, expect, it } from 'vitest';
import {
  bodyBytes,
  CANNOT_RUN,
  fuzzSeed,
  generate,
  NOT_DOWNLOADED,
  type FuzzCase,
} from '../../fuzz/generate';
import { failureMessage, Tally, writeReport, type Answer } from '../../fuzz/oracle';
import { inLanes, runCases } from '../../fuzz/run';
import { OpenAIError } from '../../../src/protocol/errors';
import {
  ECHO_MODEL,
  staticModelDirectory,
  type ModelDirectory,
  type ModelInfo,
} from '../../../src/models/models';
import { memoryServerStore, Servers } from '../../../src/servers/servers';
import { memorySettingsStore, Settings } from '../../../src/api/settings';
import { chatRequest, echoStack, scriptedBackend, URL_BASE } from '../helpers';

/** The browser run sends 10,000; here a few seconds' worth (`FUZZ_COUNT` for more). */
/** One seed for every test of the run: `FUZZ_SEED`, or a random one (printed). */
const SEED = fuzzSeed();
const COUNT = Number(process.env.FUZZ_COUNT ?? 3_000);
const CONCURRENCY = 16;
const TIMEOUT_MS = 10_000;

/** The echo model, one known but not downloaded, one this device cannot run (as the SW's are). */
const models: ModelDirectory = {
  ...staticModelDirectory(
    [
      ECHO_MODEL,
      ...[NOT_DOWNLOADED, CANNOT_RUN].map((id) => ({ ...ECHO_MODEL, id, owned_by: 'mlc-ai' })),
    ],
    { ready },
  ),
  list: async () => [ECHO_MODEL],
};

/** The service worker's checks, for the two models above that cannot answer. */
async function ready(model: ModelInfo): Promise<void> {
  if (model.id === CANNOT_RUN) {
    throw new OpenAIError('webgpu_unavailable', `${model.id} cannot run here.`, {
      shouldRetry: false,
    });
  }
  if (model.id === NOT_DOWNLOADED) {
    throw new OpenAIError('model_not_downloaded', `${model.id} is not here.`, { param: 'model' });
  }
}

/** As the service worker has it, a catalogue (here empty: the routes are what is fuzzed). */
const catalog = async () => [];
/**
 * The settings and servers routes, in memory. No server can be reached, so none is ever added;
 * keys may be issued, which changes nothing the other cases rely on.
 */
const managed = () => ({
  settings: new Settings(memorySettingsStore()),
  servers: {
    registry: new Servers(memoryServerStore(), {
      fetch: async () => {
        throw new TypeError('Failed to fetch');
      },
      organisations: async () => new Set(['hearth', 'mlc-ai']),
    }),
    backend: scriptedBackend(async function* () {}),
  },
});
/** Adding GGUF models needs the service worker's caches: the browser run fuzzes that route. */
const nodeCases = (cases: FuzzCase[]) =>
  cases.filter((c) => !(c.kind.startsWith('manage:') && c.path.startsWith('v1/hearth/models')));
const stack = echoStack({ models, catalog, ...managed() });
afterAll(() => stack.close());

async function send(c: FuzzCase, api = stack.api): Promise<Answer> {
  const started = performance.now();
  const request = new Request(`${URL_BASE}/${c.path}`, {
    method: c.method,
    headers: c.headers,
    ...(c.body && { body: bodyBytes(c.body) as BodyInit }),
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<Answer>((resolve) => {
    timer = setTimeout(
      () =>
        resolve({
          status: 0,
          contentType: null,
          requestId: null,
          text: '',
          ms: TIMEOUT_MS,
          failure: `no answer in ${TIMEOUT_MS} ms`,
          timedOut: true,
        }),
      TIMEOUT_MS,
    );
  });
  const answer = (async (): Promise<Answer> => {
    try {
      const response = await api.fetch(request);
      const text = await response.text();
      return {
        status: response.status,
        contentType: response.headers.get('content-type'),
        requestId: response.headers.get('x-request-id'),
        retryAfter: response.headers.get('retry-after'),
        shouldRetry: response.headers.get('x-should-retry'),
        text,
        ms: performance.now() - started,
      };
    } catch (err) {
      return {
        status: 0,
        contentType: null,
        requestId: null,
        text: '',
        ms: performance.now() - started,
        failure: `threw ${String(err)}`,
      };
    }
  })();
  const result = await Promise.race([answer, timeout]);
  clearTimeout(timer);
  return result;
}

it(`answers ${COUNT} generated requests as the contract says: status, code, param, and the echo reply exactly`, async () => {
  const seed = SEED;
  console.log(`fuzz (Node): seed ${seed}, ${COUNT} requests`);
  const started = performance.now();
  const cases = nodeCases(generate(seed, COUNT));
  const tally = new Tally();
  await runCases(cases, (batch) => inLanes(batch, CONCURRENCY, (c) => send(c)), tally);
  // And after all of it, a plain request still works and nothing is left open.
  const after = await stack.api.fetch(
    chatRequest({ model: 'hearth/echo', messages: [{ role: 'user', content: 'still fine' }] }),
  );
  expect(after.status).toBe(200);
  expect(await after.json()).toMatchObject({ choices: [{ message: { content: 'still fine' } }] });
  const table = tally.table(
    'fuzz, Node (src/api over the bridge and the echo engine)',
    seed,
    (performance.now() - started) / 1000,
  );
  console.log(table);
  writeReport('Node', table);
  expect(tally.failures, failureMessage(tally, seed, 'npx vitest run tests/unit/fuzz')).toEqual([]);
  expect(tally.hangs).toBe(0);
  expect(tally.repeatedRequestIds).toBe(0);
  expect(tally.unexpectedServerErrors).toBe(0);
  expect(stack.server.openPorts).toBe(0);
}, 300_000);

it('puts the queue after every check but the engine’s own: a valid request is 429 while the queue is full, a faulty one still gets its own answer', async () => {
  const seed = SEED;
  console.log(`fuzz (Node, queue full): seed ${seed}`);
  const busy = echoStack({ models, catalog, maxWaiting: 0, ...managed() });
  // One request runs for a minute: with no room to wait, the next valid one is refused.
  const words = Array.from({ length: 1200 }, (_, i) => `w${i}`).join(' ');
  const running = await busy.api.fetch(
    chatRequest({
      model: 'hearth/echo',
      messages: [{ role: 'user', content: words }],
      stream: true,
      echo_delay_ms: 50,
    }),
  );
  expect(busy.queue.counts).toEqual({ running: 1, waiting: 0 });
  const cases = nodeCases(generate(seed, 800))
    // The echo engine's own rule (its context) comes after the queue.
    .filter((c) => !/^(responses:)?context:/.test(c.kind))
    .map((c): FuzzCase =>
      'reply' in c.expect || 'response' in c.expect
        ? { ...c, expect: { status: 429, error: { code: 'queue_full', param: null } } }
        : c,
    );
  const tally = new Tally();
  const started = performance.now();
  // One at a time: the queue stays full. (No case expects a reply here: no probe is added.)
  await runCases(cases, (batch) => inLanes(batch, 1, (c) => send(c, busy.api)), tally);
  await running.body?.cancel();
  busy.close();
  const table = tally.table(
    'fuzz, Node, queue full (valid requests: 429)',
    seed,
    (performance.now() - started) / 1000,
  );
  console.log(table);
  writeReport('Node, queue full', table);
  if (!process.env.FUZZ_CASE) expect(tally.codes.get('queue_full')).toBeGreaterThan(100);
  expect(tally.failures, failureMessage(tally, seed, 'npx vitest run tests/unit/fuzz')).toEqual([]);
}, 120_000);
