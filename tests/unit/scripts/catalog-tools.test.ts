/**
 * A self-hosted WebLLM record's `tools` flag, checked at build time against WebLLM's own list of
 * function-calling models: WebLLM refuses tools to any other model id, so the catalogue must not
 * advertise them.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { functionCallingModelIds } from '@mlc-ai/web-llm';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { buildCatalog } from '../../../scripts/catalog-plugin';
import { catalogModelInfo } from '../../../src/models/catalog';
import { assertCapabilities } from '../../../src/models/models';
import { parseChatRequest } from '../../../src/protocol/validate';

const dir = mkdtempSync(join(tmpdir(), 'hearth-catalog-tools-'));
let files = 0;
function write(content: unknown): string {
  const file = join(dir, `models-${(files += 1)}.json`);
  writeFileSync(file, JSON.stringify(content));
  return file;
}

const record = (model_id: string, id: string) => ({
  id,
  model: `models/${model_id}`,
  model_id,
  model_lib: 'models/x.wasm',
  tools: true,
});

const WEATHER = { type: 'function', function: { name: 'get_weather', parameters: {} } };

afterEach(() => {
  vi.restoreAllMocks();
});

describe('self-hosted WebLLM records and tools', () => {
  it('lists a record whose model WebLLM does not call functions with as without tools, and refuses tools with a 400', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const file = write({ models: [record('Smol-q4f32_1-MLC', 'acme/smol')] });
    const entry = (await buildCatalog(file)).find((e) => e.id === 'acme/smol');
    if (!entry) throw new Error('the record is missing');
    expect(entry.tools).toBe(false);
    const info = catalogModelInfo(entry);
    expect(info.capabilities.tools).toBe(false);
    const body = parseChatRequest({
      model: entry.id,
      messages: [{ role: 'user', content: 'hi' }],
      tools: [WEATHER],
    });
    expect(() => assertCapabilities(body, info)).toThrow(
      expect.objectContaining({ status: 400, code: 'unsupported_parameter', param: 'tools' }),
    );
    // The build says why, naming the record.
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('Smol-q4f32_1-MLC'));
  });

  it('keeps tools on a record of a model WebLLM calls functions with', async () => {
    const hermes = functionCallingModelIds[0] ?? '';
    const file = write({ models: [record(hermes, 'acme/hermes')] });
    const entry = (await buildCatalog(file)).find((e) => e.id === 'acme/hermes');
    expect(entry?.tools).toBe(true);
  });
});
