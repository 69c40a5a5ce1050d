/**
 * The route table (relay/protocol.js `API_ROUTES`) against what reads it and what describes it:
 * createApi offers a route exactly where the table's `when` says, and docs/api.md's API table
 * lists every route of it and no other, so that neither can drift from the table.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { API_ROUTES, type ApiRoute, type RouteCondition } from '../../../relay/protocol.js';
import { createApi, type ApiOptions } from '../../../src/api/router';
import type { ManagingBackend } from '../../../src/api/manage';
import { memorySettingsStore, Settings } from '../../../src/api/settings';
import { ECHO_MODEL, staticModelDirectory } from '../../../src/models/models';
import type { Servers } from '../../../src/servers/servers';
import { scriptedBackend, URL_BASE } from '../helpers';

const CONDITIONS: RouteCondition[] = [
  'status',
  'settings',
  'adding',
  'servers',
  'catalog',
  'loading',
  'unloading',
];

/** `METHOD path` of a route, its `*` as the table has it. */
const label = (route: Pick<ApiRoute, 'method' | 'path'>) => `${route.method} /v1/${route.path}`;
/** What a failure says of a route createApi should offer. */
const offers = (route: ApiRoute) =>
  `${label(route)}: createApi needs a handler named ${route.name} in its group ${route.when ?? 'always'}`;

/**
 * An API given what `given` names, and nothing that works: no request here gets past the key.
 * (`unloading` needs a backend that loads, so it brings `loading` with it.)
 */
function apiGiven(given: Set<RouteCondition>) {
  const chat = scriptedBackend(async function* () {});
  const loads = given.has('loading') || given.has('unloading');
  const backend = loads
    ? ({
        ...chat,
        load: async () => undefined,
        ...(given.has('unloading') && { unload: async () => undefined }),
      } as unknown as ManagingBackend)
    : chat;
  const options: ApiOptions = {
    backend,
    models: staticModelDirectory([ECHO_MODEL]),
    ...(given.has('status') && { status: async () => ({}) }),
    ...(given.has('settings') && { settings: new Settings(memorySettingsStore()) }),
    ...(given.has('adding') && { adding: {} as NonNullable<ApiOptions['adding']> }),
    ...(given.has('servers') && { servers: { registry: {} as Servers } }),
    ...(given.has('catalog') && { catalog: async () => [] }),
  };
  return createApi(options);
}

/** What a request without a key gets at `route`: 401 where the API has it, 404 or 405 where not. */
async function statusAt(api: ReturnType<typeof createApi>, route: ApiRoute): Promise<number> {
  const url = `${URL_BASE}/v1/${route.path.replace(/\*$/, 'acme%2Fx')}`;
  const response = await api.fetch(new Request(url, { method: route.method }));
  return response.status;
}

describe('createApi and the route table', () => {
  it('offers every route of the table when given all it can be given', async () => {
    const api = apiGiven(new Set(CONDITIONS));
    for (const route of API_ROUTES) {
      expect(await statusAt(api, route), offers(route)).toBe(401);
    }
  });

  it.each([undefined, ...CONDITIONS])(
    'offers a route needing %s exactly when given it (and always the routes needing nothing)',
    async (condition) => {
      const given = new Set<RouteCondition>(condition ? [condition] : []);
      if (condition === 'unloading') given.add('loading');
      const api = apiGiven(given);
      for (const route of API_ROUTES) {
        const offered = route.when === undefined || given.has(route.when);
        const status = await statusAt(api, route);
        if (offered) expect(status, offers(route)).toBe(401);
        else expect([404, 405], label(route)).toContain(status);
      }
    },
  );
});

/** Each `METHOD[, METHOD…] /v1/path` a table's first column names, `{…}` placeholders kept. */
interface Named {
  method: string;
  path: string;
}

/** docs/api.md's tables headed `Method and path`, each as the text of its first column's cells. */
function methodTables(markdown: string): { heading: string; cells: string[] }[] {
  const tables: { heading: string; cells: string[] }[] = [];
  let heading = '';
  let current: string[] | null = null;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('#')) heading = line.replace(/^#+\s*/, '');
    if (!line.startsWith('|')) {
      current = null;
      continue;
    }
    const first = line.split(/(?<!\\)\|/)[1]?.trim() ?? '';
    if (current === null) {
      if (first !== 'Method and path') continue;
      current = [];
      tables.push({ heading, cells: current });
    } else if (!/^-+$/.test(first)) {
      current.push(first);
    }
  }
  return tables;
}

/** The routes a cell names: each code span `METHOD[, METHOD…] /v1/path`. */
function namedIn(cell: string): Named[] {
  return [...cell.matchAll(/`([^`]*)`/g)].flatMap(([, span = '']) => {
    if (span === '/v1/') return []; // "anything else under `/v1/`"
    const match = /^([A-Z]+(?:, [A-Z]+)*) \/v1\/(\S+)$/.exec(span);
    if (!match) {
      throw new Error(
        `docs/api.md names \`${span}\` in a Method and path column: write it as \`METHOD /v1/path\` (several methods: \`GET, POST /v1/path\`).`,
      );
    }
    return match[1]!.split(', ').map((method) => ({ method, path: match[2]! }));
  });
}

/** The table's route that a documented path (placeholders `{…}` standing for anything) is. */
function routeOf(named: Named): ApiRoute | undefined {
  const path = named.path.replace(/\{[^}]*\}/g, 'x');
  return API_ROUTES.find((route) => {
    if (route.method !== named.method) return false;
    if (!route.path.endsWith('/*')) return route.path === path;
    const prefix = route.path.slice(0, -1);
    return path.startsWith(prefix) && path.length > prefix.length;
  });
}

describe('docs/api.md and the route table', () => {
  const markdown = readFileSync(new URL('../../../docs/api.md', import.meta.url), 'utf8');
  const tables = methodTables(markdown);
  const api = tables.find((table) => table.heading === 'The API');

  it('has the API table, under "The API"', () => {
    expect(api?.cells.length).toBeGreaterThan(0);
  });

  it('lists every route of the table in the API table', () => {
    const listed = new Set(api!.cells.flatMap(namedIn).map(routeOf));
    const missing = API_ROUTES.filter((route) => !listed.has(route)).map(label);
    expect(
      missing,
      'routes of relay/protocol.js API_ROUTES that docs/api.md does not list',
    ).toEqual([]);
  });

  it('names no route the table lacks, in any of its Method and path tables', () => {
    const unknown = tables.flatMap(({ heading, cells }) =>
      cells
        .flatMap(namedIn)
        .filter((named) => routeOf(named) === undefined)
        .map((named) => `${named.method} /v1/${named.path} (under "${heading}")`),
    );
    expect(unknown, 'docs/api.md names these, which relay/protocol.js API_ROUTES lacks').toEqual(
      [],
    );
  });
});
