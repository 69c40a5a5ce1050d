/**
 * @module
 * Fuzz cases for the envelope beyond route, method and key: HEAD on every route, trailing and
 * double slashes, and hostile or clumsy bodies for the management routes. The routes come from
 * the route table (relay/protocol.js `API_ROUTES`); what they answer from docs/api.md's contract
 * (API table, Auth, Order of checks), as in generate.ts.
 */
import type { BodySpec, Expectation, Rng } from './generate';
import { API_ROUTES, type RouteCondition } from '../../relay/protocol.js';

/** One case, as generate.ts completes it. */
export interface RouteCase {
  kind: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: BodySpec | null;
  expect: Expectation;
}

const KEY = { authorization: 'Bearer k' };
const JSON_KEYED = { ...KEY, 'content-type': 'application/json' };
const error = (status: number, code: string, param: string | null = null): Expectation => ({
  status,
  error: { code, param },
});

/**
 * What GET gets at each GET route of the route table (relay/protocol.js `API_ROUTES`), by the
 * table's path, with the `sample` a path's `*` takes: HEAD must get the same status, and no body.
 * A GET route the fuzz leaves out says why (`skip`). A GET route of the table missing here, or a
 * path here the table lacks, stops the fuzz suite with a message that says so.
 */
const GET_EXPECTED: Record<string, { sample?: string; expect: Expectation } | { skip: string }> = {
  'openai/models': { expect: { status: 200, listing: 'list' } },
  models: { expect: { status: 200, listing: 'list' } },
  'openai/models/*': { sample: 'hearth%2Fecho', expect: { status: 200, listing: 'model' } },
  'models/*': { sample: 'hearth/echo', expect: { status: 200, listing: 'model' } },
  'hearth/status': { expect: { status: 200, oneOf: [200] } },
  'hearth/catalog': { expect: { status: 200, oneOf: [200] } },
  'hearth/settings': { expect: { status: 200, oneOf: [200] } },
  'hearth/keys': { expect: { status: 200, oneOf: [200] } },
  'hearth/servers': { expect: { status: 200, oneOf: [200] } },
  // A response never kept: OpenAI's 404 (the kept ones: tests/unit/api/responses.test.ts).
  'openai/responses/*': {
    sample: 'resp_fuzz',
    expect: { status: 404, error: { code: 'response_not_found', param: null } },
  },
  'responses/*': {
    sample: 'resp_fuzz/input_items',
    expect: { status: 404, error: { code: 'response_not_found', param: null } },
  },
  'hearth/responses': { expect: { status: 200, oneOf: [200] } },
  'openai/vector_stores': { expect: { status: 200, oneOf: [200] } },
  vector_stores: { expect: { status: 200, oneOf: [200] } },
  // A store never made: OpenAI's 404 (the stores made: tests/unit/api/vector-stores.test.ts).
  'openai/vector_stores/*': {
    sample: 'vs_fuzz',
    expect: { status: 404, error: { code: 'vector_store_not_found', param: null } },
  },
  'vector_stores/*': {
    sample: 'vs_fuzz/files',
    expect: { status: 404, error: { code: 'vector_store_not_found', param: null } },
  },
  // The files kept: a list (tests/unit/api/files.test.ts has its contents); a file never kept: 404.
  'openai/files': { expect: { status: 200, oneOf: [200] } },
  files: { expect: { status: 200, oneOf: [200] } },
  'openai/files/*': {
    sample: 'file-fuzz',
    expect: { status: 404, error: { code: 'file_not_found', param: 'id' } },
  },
  'files/*': {
    sample: 'file-fuzz/content',
    expect: { status: 404, error: { code: 'file_not_found', param: 'id' } },
  },
  'hearth/models/*': {
    skip: 'what it answers depends on the model files the device holds (tests/unit/api/manage.test.ts)',
  },
};

/** What both runners give createApi, of the options the table's `when` names. */
const OFFERED = new Set<RouteCondition | undefined>([
  undefined,
  'status',
  'settings',
  'servers',
  'catalog',
]);

/** The GET routes of the table, each as a path the cases take, with what GET gets there. */
function getRoutes(): { path: string; expect: Expectation }[] {
  const table = new Set(API_ROUTES.filter((r) => r.method === 'GET').map((r) => r.path));
  const stale = Object.keys(GET_EXPECTED).filter((path) => !table.has(path));
  if (stale.length > 0) {
    throw new Error(`tests/fuzz/routes.ts expects GET ${stale.join(', ')}: no such route.`);
  }
  return [...table].flatMap((path) => {
    const known = GET_EXPECTED[path];
    if (!known) {
      throw new Error(
        `The route table's GET ${path} has no expectation in tests/fuzz/routes.ts (GET_EXPECTED): say what GET answers there, or why the fuzz leaves it out.`,
      );
    }
    if ('skip' in known) return [];
    if (path.endsWith('/*') !== (known.sample !== undefined)) {
      throw new Error(`tests/fuzz/routes.ts: GET ${path} takes a sample exactly where it has a *.`);
    }
    return [{ path: `v1/${path.replace(/\*$/, known.sample ?? '')}`, expect: known.expect }];
  });
}

/**
 * The table's paths without GET that both runners offer, as paths the cases take (a `*` filled
 * in: the 405 comes before the handler reads it): HEAD is 405 there, like any other method they
 * lack.
 */
function noGetRoutes(): string[] {
  const offered = API_ROUTES.filter((r) => OFFERED.has(r.when));
  const withGet = new Set(offered.filter((r) => r.method === 'GET').map((r) => r.path));
  const paths = new Set(offered.map((r) => r.path).filter((path) => !withGet.has(path)));
  return [...paths].map((path) => `v1/${path.replace(/\*$/, 'fuzz-none')}`);
}

/**
 * Management routes that take a body, each with a path that exists whatever the run has added.
 * `oneOf`: what the contract allows them to answer (a success, a 4xx of theirs, or the 5xx docs/api.md
 * documents for a server that cannot be reached).
 */
const MANAGED: { method: string; path: string; oneOf: number[] }[] = [
  // 400 includes `allow_private_network` for a target more private than the app; 409 a name taken.
  { method: 'POST', path: 'v1/hearth/models', oneOf: [201, 400, 404, 409] },
  // docs/servers.md: a server that cannot be reached is 503 `upstream_unavailable`, one
  // that does not answer in time 504 `upstream_timeout`, one that answers wrongly 502.
  { method: 'POST', path: 'v1/hearth/servers', oneOf: [201, 400, 409, 502, 503, 504] },
  { method: 'PATCH', path: 'v1/hearth/servers/fuzz-none', oneOf: [200, 400, 404] },
  { method: 'PATCH', path: 'v1/hearth/settings', oneOf: [200, 400] },
  { method: 'POST', path: 'v1/hearth/keys', oneOf: [200, 201, 400, 409] },
];

/** Unreachable on purpose: a body that would succeed still adds nothing that answers. */
const NOWHERE = ['http://127.0.0.1:9/v1', 'http://[::1]:9/x.gguf', 'http://localhost:9/m.gguf'];

/**
 * Bodies that are not what a management route takes: not JSON, not an object, wrong types,
 * prototype keys, deep or long values. None may switch the auth mode or set hearth/echo's
 * prices: the other cases of the run rely on both.
 */
function clumsyBody(rng: Rng): BodySpec {
  const deep = (n: number) => ({
    parts: [
      { repeat: '[', count: n },
      { repeat: ']', count: n },
    ],
  });
  const json = (value: unknown) => ({ parts: [JSON.stringify(value)] });
  const picks: (() => BodySpec)[] = [
    () => ({ parts: [''] }),
    () => ({
      parts: [rng.pick(['null', '[]', '"x"', '1', 'true', '{', '{"name":', '}{', '{}{}'])],
    }),
    () => deep(rng.pick([100, 100_000])),
    () => ({ parts: ['{"name":', deep(50_000).parts[0]!, deep(50_000).parts[1]!, '}'] }),
    () => ({ bytes: [0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d] }),
    () => ({ parts: ['{"__proto__":{"auth":"issued"},"constructor":{"prototype":{"x":1}}}'] }),
    () => ({ parts: ['{"name":"a","name":{"x":1},"base_url":"', rng.pick(NOWHERE), '"}'] }),
    () => json({ name: rng.pick([123, null, [], {}, '', ' ', 'x'.repeat(10_000)]) }),
    () => json({ base_url: rng.pick([1, null, '', 'ftp://x', 'javascript:alert(1)', 'http://']) }),
    () => json({ name: 'fuzz-x', base_url: rng.pick(NOWHERE), api_key: rng.pick([1, {}, 'k']) }),
    () => json({ source: rng.pick([null, 1, '', ' ', 'hf:', 'hf:a/b:', '../../etc/passwd']) }),
    () => json({ source: rng.pick(NOWHERE), context_window: rng.pick([0, -1, 1.5, '4096']) }),
    () => json({ source: rng.pick(NOWHERE), id: rng.pick(['hearth/echo', 1, '/', 'a/b/c']) }),
    () => json({ auth: rng.pick(['nope', 1, null, ['any'], 'ANY']) }),
    () => json({ prices: rng.pick([1, 'x', [], { 'acme/x': { prompt: -1, completion: 1 } }]) }),
    () => json({ prices: { 'acme/x': { prompt: '1', completion: Number.MAX_VALUE } } }),
    () => json({ offered: rng.pick([1, 'yes', null, []]) }),
    () => json({ key: rng.pick(['hk-short', 1, 'x'.repeat(100)]), name: 'fuzz' }),
    () => json({ name: 'fuzz', unknown_field: true }),
    () => ({ parts: ['{"name":"', { repeat: 'n', count: 3 * 1024 * 1024 }, '"}'] }),
  ];
  return rng.pick(picks)();
}

/** The cases of this module, as generate.ts's mutations. */
export function routeCases(): ((rng: Rng) => RouteCase)[] {
  const list: ((rng: Rng) => RouteCase)[] = [];
  for (const { path, expect } of getRoutes()) {
    list.push(() => ({
      kind: 'head:get-route',
      method: 'HEAD',
      path,
      headers: KEY,
      body: null,
      expect: { status: expect.status, head: true },
    }));
    list.push((rng) => ({
      kind: 'head:no-key',
      method: 'HEAD',
      path,
      headers: rng.pick<Record<string, string>>([{}, { authorization: 'Bearer ' }]),
      body: null,
      expect: { status: 401, head: true },
    }));
    // One trailing slash is the same route; two, or one inside, are another, unknown one.
    list.push(() => ({
      kind: 'slash:trailing',
      method: 'GET',
      path: `${path}/`,
      headers: KEY,
      body: null,
      expect,
    }));
    list.push((rng) => {
      const doubled = rng.pick([
        `${path}//`,
        path.replace('v1/', 'v1//'),
        path.replace(/\/([^/]*)$/, '//$1'),
      ]);
      // Under `models/`, what follows is a model's id, and no id has an empty segment.
      const id = /^v1\/(openai\/)?models\/./.test(doubled.replace(/\/$/, ''));
      return {
        kind: 'slash:double',
        method: 'GET',
        path: doubled,
        headers: KEY,
        body: null,
        expect: id ? error(404, 'model_not_found', 'model') : error(404, 'unknown_url'),
      };
    });
  }
  for (const path of noGetRoutes()) {
    list.push((rng) => ({
      kind: 'head:post-route',
      method: 'HEAD',
      path: rng.pick([path, `${path}/`]),
      headers: KEY,
      body: null,
      expect: { status: 405, head: true },
    }));
  }
  list.push((rng) => ({
    kind: 'head:unknown',
    method: 'HEAD',
    path: rng.pick(['v1/nope', 'v1/hearth', 'v1/openai//models']),
    headers: KEY,
    body: null,
    expect: { status: 404, head: true },
  }));
  for (const { method, path, oneOf } of MANAGED) {
    list.push((rng) => ({
      kind: `manage:${method}-${path.split('/').slice(2, 4).join('-')}`,
      method,
      path: rng.chance(0.2) ? `${path}/` : path,
      headers: rng.chance(0.9)
        ? JSON_KEYED
        : rng.pick([KEY, { ...KEY, 'content-type': 'text/plain' }]),
      body: clumsyBody(rng),
      // 413 for the 3 MiB name only where the route's limit is lower; 415 without JSON.
      expect: { status: 400, oneOf: [...oneOf, 413, 415] },
    }));
  }
  return list;
}
