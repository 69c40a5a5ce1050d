import { describe, expect, it } from 'vitest';
import { OpenAIError } from '../../../src/protocol/errors';
import {
  MAX_SPLIT_PARTS,
  resolveSource,
  type FetchLike,
  type SourceDeps,
} from '../../../src/models/added/gguf-source';
import { checkGguf } from '../../../src/models/added/gguf-check';
import { MemoryCaches } from '../fake-storage';

const APP = 'https://app.example/hearth/';
const GGUF_HEAD = new Uint8Array([0x47, 0x47, 0x55, 0x46, 3, 0, 0, 0]);

function deps(fetch: FetchLike): SourceDeps {
  return { appUrl: APP, fetch, caches: new MemoryCaches(), hubUrl: 'https://hub.example' };
}

describe('split GGUF limits', () => {
  it('refuses a split GGUF of more parts than the cap with 400 on source, fetching nothing', async () => {
    let fetched = 0;
    const fetch: FetchLike = async () => {
      fetched += 1;
      return new Response(GGUF_HEAD);
    };
    const err = await resolveSource(
      'https://files.example/x-00001-of-99999.gguf',
      deps(fetch),
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(OpenAIError);
    expect((err as OpenAIError).status).toBe(400);
    expect((err as OpenAIError).param).toBe('source');
    expect((err as OpenAIError).message).toContain(`${MAX_SPLIT_PARTS}`);
    expect(fetched).toBe(0);
  });

  it('accepts a split GGUF of exactly the cap', async () => {
    const total = String(MAX_SPLIT_PARTS).padStart(5, '0');
    const source = await resolveSource(
      `https://files.example/x-00001-of-${total}.gguf`,
      deps(async () => new Response(GGUF_HEAD)),
    );
    expect(source.files).toHaveLength(MAX_SPLIT_PARTS);
  });

  it('checks the parts of a split GGUF at most four at a time', async () => {
    let running = 0;
    let most = 0;
    let seen = 0;
    const fetch: FetchLike = async () => {
      running += 1;
      seen += 1;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, 1));
      running -= 1;
      return new Response(GGUF_HEAD, {
        status: 206,
        headers: { 'content-range': 'bytes 0-7/100' },
      });
    };
    const files = Array.from({ length: 20 }, (_, i) => `https://files.example/p${i}.gguf`);
    expect(await checkGguf(files, deps(fetch))).toBe(2000);
    expect(seen).toBe(20);
    expect(most).toBe(4);
  });
});
