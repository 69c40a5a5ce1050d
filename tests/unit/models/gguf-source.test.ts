import { describe, expect, it } from 'vitest';
import { OpenAIError } from '../../../src/protocol/errors';
import { ggufPartKey, ggufSizeKey } from '../../../src/models/gguf-parts';
import {
  chooseProjector,
  projectorUrl,
  quantOf,
  resolveSource,
  type FetchLike,
  type SourceDeps,
} from '../../../src/models/added/gguf-source';
import { checkGguf } from '../../../src/models/added/gguf-check';
import { MemoryCaches } from '../fake-storage';

const APP = 'https://app.example/hearth/';
const HUB = 'https://hub.example';
const GGUF_HEAD = new Uint8Array([0x47, 0x47, 0x55, 0x46, 3, 0, 0, 0, 9, 9, 9, 9]);

/** A network of files by URL; anything else answers 404. Records each request. */
function network(files: Record<string, Uint8Array<ArrayBuffer> | string | Error>) {
  const requests: { url: string; range: string | null }[] = [];
  const fetch: FetchLike = async (url, init) => {
    const range = new Headers(init?.headers).get('range');
    requests.push({ url, range });
    const file = files[url];
    if (file instanceof Error) throw file;
    if (file === undefined)
      return new Response('not found', { status: 404, statusText: 'Not Found' });
    const bytes = typeof file === 'string' ? new TextEncoder().encode(file) : file;
    const match = range && /^bytes=(\d+)-(\d+)$/.exec(range);
    if (!match) return new Response(bytes, { headers: { 'content-length': `${bytes.length}` } });
    const end = Math.min(Number(match[2]), bytes.length - 1);
    return new Response(bytes.slice(Number(match[1]), end + 1), {
      status: 206,
      headers: { 'content-range': `bytes ${match[1]}-${end}/${bytes.length}` },
    });
  };
  return { fetch, requests };
}

function deps(
  files: Record<string, Uint8Array<ArrayBuffer> | string | Error> = {},
  caches = new MemoryCaches(),
) {
  const net = network(files);
  const options: SourceDeps = { appUrl: APP, fetch: net.fetch, caches, hubUrl: HUB };
  return { ...options, requests: net.requests };
}

/** The error a promise rejects with, as the wire would show it. */
async function failure(promise: Promise<unknown>) {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OpenAIError);
  return err as OpenAIError;
}

/** A Hub model listing with these files. */
const listing = (...names: string[]) =>
  JSON.stringify({ id: 'x', siblings: names.map((rfilename) => ({ rfilename })) });

describe('quantOf', () => {
  it.each([
    ['Qwen2.5-0.5B-Instruct-Q4_K_M.gguf', 'Q4_K_M'],
    ['llama-2-7b.Q5_K_S.gguf', 'Q5_K_S'],
    ['ggml-model-f16.gguf', 'f16'],
    ['Qwen3-4B-BF16.gguf', 'BF16'],
    ['big-IQ4_XS-00002-of-00003.gguf', 'IQ4_XS'],
    ['sub/dir/model-Q8_0.gguf', 'Q8_0'],
  ])('reads the quantisation of %s as %s', (name, quant) => {
    expect(quantOf(name)).toBe(quant);
  });

  it('finds none in a name that has none', () => {
    expect(quantOf('fixture.gguf')).toBeNull();
    expect(quantOf('Qwen2.5-0.5B.gguf')).toBeNull();
  });
});

describe('chooseProjector', () => {
  const names = [
    'mmproj-m-Q8_0.gguf',
    'mmproj-m-BF16.gguf',
    'mmproj-m-f16.gguf',
    'mmproj-m-f32.gguf',
  ];

  it("takes a repo's only projector, whatever its quantisation", () => {
    expect(chooseProjector(['mmproj-m-Q4_0.gguf'], 'Q8_0')).toBe('mmproj-m-Q4_0.gguf');
    expect(chooseProjector([], 'Q8_0')).toBeUndefined();
  });

  it("takes the model's own quantisation first, whatever its case", () => {
    expect(chooseProjector(names, 'q8_0')).toBe('mmproj-m-Q8_0.gguf');
  });

  it('else F16, then BF16, Q8_0 and F32, then the first by name', () => {
    expect(chooseProjector(names, 'Q4_K_M')).toBe('mmproj-m-f16.gguf');
    expect(chooseProjector(names.slice(0, 2), 'Q4_K_M')).toBe('mmproj-m-BF16.gguf');
    expect(chooseProjector(['mmproj-b.gguf', 'mmproj-a.gguf'], 'Q4_K_M')).toBe('mmproj-a.gguf');
  });
});

describe('projectorUrl', () => {
  const d = { appUrl: 'https://app.example/hearth/' } as SourceDeps;

  it('resolves a path of the app and keeps an http(s) URL', () => {
    expect(projectorUrl('models/mmproj.gguf', d)).toBe(
      'https://app.example/hearth/models/mmproj.gguf',
    );
    expect(projectorUrl('http://lan.example/p.GGUF', d)).toBe('http://lan.example/p.GGUF');
  });

  it.each(['ftp://x.example/p.gguf', 'https://x.example/p.bin', 'http://['])(
    'refuses %s with 400 on mmproj',
    (given) => {
      let error: unknown;
      try {
        projectorUrl(given, d);
      } catch (err) {
        error = err;
      }
      expect(error).toMatchObject({ status: 400, code: 'invalid_value', param: 'mmproj' });
    },
  );
});

describe('resolveSource: a URL or a path', () => {
  it.each([
    [
      'https://huggingface.co/bartowski/Qwen2.5-0.5B-Instruct-GGUF/resolve/main/Qwen2.5-0.5B-Instruct-Q4_K_M.gguf',
      'bartowski/Qwen2.5-0.5B-Instruct-GGUF:Q4_K_M',
    ],
    ['https://hub.example/acme/Tiny-GGUF/resolve/v2/tiny-q8_0.gguf', 'acme/Tiny-GGUF:q8_0'],
    ['http://localhost:4831/gguf/fixture.gguf', 'localhost-4831/fixture:GGUF'],
    ['https://models.example/x/tiny-llama-Q8_0.gguf', 'models.example/tiny-llama:Q8_0'],
    ['https://models.example/x/llama-2-7b.Q5_K_S.gguf', 'models.example/llama-2-7b:Q5_K_S'],
    ['models/my-model.Q4_0.gguf', 'local/my-model:Q4_0'],
    ['/hearth/models/Q8_0.gguf', 'local/Q8_0:Q8_0'],
    ['https://app.example/hearth/v1/hearth/files/1234/my%20model.gguf', 'local/my-model:GGUF'],
  ])('names %s %s by default', async (source, id) => {
    expect((await resolveSource(source, deps())).id).toBe(id);
  });

  it('keeps the file as an absolute URL, a path resolved against the app', async () => {
    expect(await resolveSource('models/m.gguf', deps())).toEqual({
      id: 'local/m:GGUF',
      files: ['https://app.example/hearth/models/m.gguf'],
    });
  });

  it('expands the first part of a split GGUF to every part, in order', async () => {
    const source = await resolveSource('https://m.example/big-Q4_K_M-00001-of-00003.gguf', deps());
    expect(source).toEqual({
      id: 'm.example/big:Q4_K_M',
      files: [
        'https://m.example/big-Q4_K_M-00001-of-00003.gguf',
        'https://m.example/big-Q4_K_M-00002-of-00003.gguf',
        'https://m.example/big-Q4_K_M-00003-of-00003.gguf',
      ],
    });
  });

  it('refuses a later part of a split GGUF, naming the first', async () => {
    const err = await failure(
      resolveSource('https://m.example/big-Q4_K_M-00002-of-00003.gguf', deps()),
    );
    expect(err).toMatchObject({ status: 400, code: 'invalid_value', param: 'source' });
    expect(err.message).toContain('big-Q4_K_M-00001-of-00003.gguf');
  });

  it.each([
    ['a scheme other than http(s)', 'ftp://m.example/m.gguf', 'http'],
    ['a file that is not a .gguf', 'https://m.example/model.bin', '.gguf'],
    ['a GGUF id without hf:', 'bartowski/Qwen-GGUF:Q4_K_M', 'hf:bartowski/Qwen-GGUF:Q4_K_M'],
    ['an empty source', ' ', '.gguf'],
  ])('refuses %s with 400 invalid_value saying what it takes', async (_what, source, hint) => {
    const err = await failure(resolveSource(source, deps()));
    expect(err).toMatchObject({ status: 400, code: 'invalid_value', param: 'source' });
    expect(err.message).toContain(hint);
  });
});

describe('resolveSource: hf:<user>/<repo>:<quant>', () => {
  const API = `${HUB}/api/models/bartowski/Qwen2.5-0.5B-Instruct-GGUF`;
  const FILES = `${HUB}/bartowski/Qwen2.5-0.5B-Instruct-GGUF/resolve/main/`;
  const repo = listing(
    'README.md',
    'Qwen2.5-0.5B-Instruct-Q4_K_M.gguf',
    'Qwen2.5-0.5B-Instruct-Q4_K.gguf',
    'Qwen2.5-0.5B-Instruct-Q8_0.gguf',
    'Qwen2.5-0.5B-Instruct-f16.gguf',
    'mmproj-Qwen2.5-0.5B-Instruct-f16.gguf',
  );

  it('asks the Hub for the repository’s files and picks the quantisation, whatever its case', async () => {
    const d = deps({ [API]: repo });
    const source = await resolveSource('hf:bartowski/Qwen2.5-0.5B-Instruct-GGUF:q4_k_m', d);
    expect(source).toEqual({
      id: 'bartowski/Qwen2.5-0.5B-Instruct-GGUF:Q4_K_M',
      files: [`${FILES}Qwen2.5-0.5B-Instruct-Q4_K_M.gguf`],
      mmproj: `${FILES}mmproj-Qwen2.5-0.5B-Instruct-f16.gguf`,
    });
    expect(d.requests.map((r) => r.url)).toEqual([API]);
  });

  it('matches a quantisation as a whole: Q4_K is not Q4_K_M', async () => {
    const source = await resolveSource(
      'hf:bartowski/Qwen2.5-0.5B-Instruct-GGUF:Q4_K',
      deps({ [API]: repo }),
    );
    expect(source.files).toEqual([`${FILES}Qwen2.5-0.5B-Instruct-Q4_K.gguf`]);
  });

  it('takes the vision projector (mmproj) of the same quantisation as its projector, not its model', async () => {
    const source = await resolveSource(
      'hf:bartowski/Qwen2.5-0.5B-Instruct-GGUF:F16',
      deps({ [API]: repo }),
    );
    expect(source.files).toEqual([`${FILES}Qwen2.5-0.5B-Instruct-f16.gguf`]);
    expect(source.mmproj).toBe(`${FILES}mmproj-Qwen2.5-0.5B-Instruct-f16.gguf`);
    expect(source.id).toBe('bartowski/Qwen2.5-0.5B-Instruct-GGUF:f16');
  });

  it('takes Q4_K_M when no quantisation is given, as llama.cpp’s -hf does', async () => {
    const source = await resolveSource(
      'hf:bartowski/Qwen2.5-0.5B-Instruct-GGUF',
      deps({ [API]: repo }),
    );
    expect(source.id).toBe('bartowski/Qwen2.5-0.5B-Instruct-GGUF:Q4_K_M');
  });

  it('lists the parts of a split GGUF in order, from a folder of the repository', async () => {
    const api = `${HUB}/api/models/acme/Big-GGUF`;
    const files = listing(
      'Q8_0/Big-Q8_0-00002-of-00002.gguf',
      'Q8_0/Big-Q8_0-00001-of-00002.gguf',
      'Big-Q2_K.gguf',
    );
    const source = await resolveSource('hf:acme/Big-GGUF:Q8_0', deps({ [api]: files }));
    expect(source).toEqual({
      id: 'acme/Big-GGUF:Q8_0',
      files: [
        `${HUB}/acme/Big-GGUF/resolve/main/Q8_0/Big-Q8_0-00001-of-00002.gguf`,
        `${HUB}/acme/Big-GGUF/resolve/main/Q8_0/Big-Q8_0-00002-of-00002.gguf`,
      ],
    });
  });

  it('refuses a split GGUF with a part missing from the repository', async () => {
    const api = `${HUB}/api/models/acme/Big-GGUF`;
    const files = listing('Big-Q8_0-00001-of-00003.gguf', 'Big-Q8_0-00003-of-00003.gguf');
    const err = await failure(resolveSource('hf:acme/Big-GGUF:Q8_0', deps({ [api]: files })));
    expect(err).toMatchObject({ status: 400, param: 'source' });
    expect(err.message).toContain('Big-Q8_0-00002-of-00003.gguf');
  });

  it('answers 400 naming the quantisations there are when none matches', async () => {
    const err = await failure(
      resolveSource('hf:bartowski/Qwen2.5-0.5B-Instruct-GGUF:Q3_K_L', deps({ [API]: repo })),
    );
    expect(err).toMatchObject({ status: 400, code: 'invalid_value', param: 'source' });
    expect(err.message).toContain('Q3_K_L');
    expect(err.message).toContain('Q4_K, Q4_K_M, Q8_0, f16');
  });

  it('answers 400 when several different files match, naming them', async () => {
    const api = `${HUB}/api/models/acme/Two-GGUF`;
    const files = listing('one-Q4_0.gguf', 'two-Q4_0.gguf');
    const err = await failure(resolveSource('hf:acme/Two-GGUF:Q4_0', deps({ [api]: files })));
    expect(err.message).toContain('one-Q4_0.gguf');
    expect(err.message).toContain('two-Q4_0.gguf');
  });

  it('answers 400 when the repository does not exist on the Hub', async () => {
    const err = await failure(resolveSource('hf:acme/None-GGUF:Q4_0', deps()));
    expect(err).toMatchObject({ status: 400, param: 'source' });
    expect(err.message).toContain('acme/None-GGUF');
    expect(err.message).toContain('404');
  });

  it('answers 400 saying it could not reach the Hub', async () => {
    const api = `${HUB}/api/models/acme/Any-GGUF`;
    const err = await failure(
      resolveSource('hf:acme/Any-GGUF:Q4_0', deps({ [api]: new TypeError('Failed to fetch') })),
    );
    expect(err).toMatchObject({ status: 400, param: 'source' });
    expect(err.message).toContain('could not reach hub.example');
  });

  it('refuses an id that is not <user>/<repo>:<quant>', async () => {
    const err = await failure(resolveSource('hf:just-a-name', deps()));
    expect(err).toMatchObject({ status: 400, param: 'source' });
    expect(err.message).toContain('hf:<user>/<repo>:<quant>');
  });
});

describe('checkGguf', () => {
  const URL1 = 'https://m.example/m-Q4_0.gguf';

  it('asks for the first bytes only, and takes the size from the range’s answer', async () => {
    const d = deps({ [URL1]: GGUF_HEAD });
    expect(await checkGguf([URL1], d)).toBe(GGUF_HEAD.length);
    expect(d.requests).toEqual([{ url: URL1, range: 'bytes=0-7' }]);
  });

  it('accepts a server that ignores the range and sends the whole file', async () => {
    const whole: FetchLike = async () =>
      new Response(GGUF_HEAD, { headers: { 'content-length': `${GGUF_HEAD.length}` } });
    expect(await checkGguf([URL1], { ...deps(), fetch: whole })).toBe(GGUF_HEAD.length);
  });

  it('asks for the size with HEAD when CORS hides the range’s total', async () => {
    const methods: string[] = [];
    const hidden: FetchLike = async (_url, init) => {
      methods.push(init?.method ?? 'GET');
      if (init?.method === 'HEAD') {
        return new Response(null, { headers: { 'content-length': '1234' } });
      }
      return new Response(GGUF_HEAD.slice(0, 8), { status: 206 });
    };
    expect(await checkGguf([URL1], { ...deps(), fetch: hidden })).toBe(1234);
    expect(methods).toEqual(['GET', 'HEAD']);
  });

  it('adds up the sizes of every part of a split GGUF, checking each', async () => {
    const parts = [
      'https://m.example/a-00001-of-00002.gguf',
      'https://m.example/a-00002-of-00002.gguf',
    ];
    const d = deps({ [parts[0]!]: GGUF_HEAD, [parts[1]!]: GGUF_HEAD });
    expect(await checkGguf(parts, d)).toBe(2 * GGUF_HEAD.length);
    expect(d.requests.map((r) => r.url).sort()).toEqual(parts);
  });

  it('refuses a file that does not begin with GGUF, with 400 invalid_value saying so', async () => {
    const err = await failure(checkGguf([URL1], deps({ [URL1]: '<!doctype html><p>hi' })));
    expect(err).toMatchObject({ status: 400, code: 'invalid_value', param: 'source' });
    expect(err.message).toContain('is not a GGUF file');
    expect(err.message).toContain('<!do');
  });

  it('refuses a file the server does not have, with the status it answered', async () => {
    const err = await failure(checkGguf([URL1], deps()));
    expect(err).toMatchObject({ status: 400, code: 'invalid_value', param: 'source' });
    expect(err.message).toContain('answered 404 Not Found');
  });

  it('says it could not reach a server that does not answer', async () => {
    const err = await failure(
      checkGguf([URL1], deps({ [URL1]: new TypeError('Failed to fetch') })),
    );
    expect(err).toMatchObject({ status: 400, code: 'invalid_value', param: 'source' });
    expect(err.message).toContain('could not reach m.example');
  });

  it('gives up on a server that does not answer in time', async () => {
    const never: FetchLike = (_url, init) =>
      new Promise((_resolve, reject) =>
        init?.signal?.addEventListener('abort', () => reject(init.signal?.reason)),
      );
    const err = await failure(checkGguf([URL1], { ...deps(), fetch: never, timeoutMs: 20 }));
    expect(err).toMatchObject({ status: 400, param: 'source' });
    expect(err.message).toContain('did not answer');
  });

  it('reads a file of the app from the GGUF cache first, as parts are stored, without the network', async () => {
    const caches = new MemoryCaches();
    const url = 'https://app.example/hearth/v1/hearth/files/1/m.gguf';
    const cache = await caches.open('hearth/gguf');
    const record = { bytes: GGUF_HEAD.length, part_bytes: 8, complete: true };
    await cache.put(ggufSizeKey(url), Response.json(record));
    await cache.put(ggufPartKey(url, 0, 7), new Response(GGUF_HEAD.slice(0, 8)));
    await cache.put(ggufPartKey(url, 8, 11), new Response(GGUF_HEAD.slice(8)));
    const d = deps({}, caches);
    expect(await checkGguf([url], d)).toBe(GGUF_HEAD.length);
    expect(d.requests).toEqual([]);
  });

  it('fetches a file of the app that is not in the cache', async () => {
    const url = 'https://app.example/hearth/models/m.gguf';
    const d = deps({ [url]: GGUF_HEAD });
    expect(await checkGguf([url], d)).toBe(GGUF_HEAD.length);
    expect(d.requests).toHaveLength(1);
  });
});
