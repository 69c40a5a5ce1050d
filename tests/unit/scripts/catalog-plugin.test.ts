/**
 * The self-hosted catalogue file (public/models.json) with GGUF models beside WebLLM records:
 * checked at build time, each mistake named by its place in the file.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readSelfHosted } from '../../../scripts/catalog-plugin';

const dir = mkdtempSync(join(tmpdir(), 'hearth-self-hosted-'));
let files = 0;
/** Writes `content` as a models.json and returns its path. */
function write(content: unknown): string {
  const file = join(dir, `models-${(files += 1)}.json`);
  writeFileSync(file, JSON.stringify(content));
  return file;
}

const GGUF = {
  id: 'acme/Tiny-GGUF:Q4_K_M',
  engine: 'llama.cpp',
  files: ['models/tiny-q4_k_m.gguf'],
  context_window: 2048,
};

describe('self-hosted GGUF models', () => {
  it('reads a GGUF entry beside a WebLLM record, as llama.cpp’s', () => {
    const webllm = { id: 'acme/smol', model: 'models/smol', model_id: 'smol', model_lib: 'x.wasm' };
    const [gguf, mlc] = readSelfHosted(write({ models: [GGUF, webllm] }));
    expect(gguf).toMatchObject({
      id: 'acme/Tiny-GGUF:Q4_K_M',
      owned_by: 'acme',
      engine: 'llama.cpp',
      files: ['models/tiny-q4_k_m.gguf'],
      quant: 'Q4_K_M',
      context_window: 2048,
      required_features: [],
      tools: false,
      source: 'self-hosted',
    });
    expect(mlc).toMatchObject({ id: 'acme/smol', engine: 'webllm' });
  });

  it('takes a vision projector beside the model, which makes it take images', () => {
    const [entry] = readSelfHosted(write({ models: [{ ...GGUF, mmproj: 'models/mmproj.gguf' }] }));
    expect(entry).toMatchObject({ files: GGUF.files, mmproj: 'models/mmproj.gguf' });
    expect(() => readSelfHosted(write({ models: [{ ...GGUF, mmproj: '' }] }))).toThrow(
      /models\.0\.mmproj/,
    );
  });

  it('keeps the parts of a split GGUF in order, and its sizes and flags', () => {
    const parts = ['a-00001-of-00002.gguf', 'a-00002-of-00002.gguf'];
    const [entry] = readSelfHosted(
      write({
        models: [
          { ...GGUF, files: parts, size_mb: 900, memory_mb: 1200, tools: true, reasoning: true },
        ],
      }),
    );
    expect(entry).toMatchObject({
      files: parts,
      size_mb: 900,
      vram_required_mb: 1200,
      tools: true,
      reasoning: true,
    });
  });

  it('refuses an id that is not <user>/<repo>:<quant>, naming the field', () => {
    const file = write({ models: [{ ...GGUF, id: 'acme/tiny' }] });
    expect(() => readSelfHosted(file)).toThrow(
      /models\.0\.id: A GGUF id is <user>\/<repo>:<quant>/,
    );
  });

  it('refuses a GGUF entry without files', () => {
    expect(() => readSelfHosted(write({ models: [{ ...GGUF, files: [] }] }))).toThrow(
      /models\.0\.files/,
    );
    const { files: _, ...noFiles } = GGUF;
    expect(() => readSelfHosted(write({ models: [noFiles] }))).toThrow(/models\.0\.files/);
  });
});
