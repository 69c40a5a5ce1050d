/**
 * A model of the app's catalogue for the UI's unit tests: a WebLLM model that runs here and is
 * not downloaded, with `fields` over it.
 */
import type { CatalogModel } from '../../../../src/app/shared/api-client';

export function catalogModel(id: string, fields: Partial<CatalogModel> = {}): CatalogModel {
  return {
    id,
    object: 'model',
    owned_by: id.split('/')[0]!,
    engine: 'webllm',
    size_mb: 300,
    vram_required_mb: 600,
    context_window: 4096,
    required_features: [],
    available: true,
    // As the catalogue says it: runs well on the GPU; `available: false` is a fit of `no`.
    backend: fields.engine === 'llama.cpp' ? 'cpu' : 'webgpu',
    fit: fields.available === false ? 'no' : 'good',
    downloaded: false,
    loaded: false,
    source: 'prebuilt',
    tools: false,
    reasoning: false,
    vision: false,
    ...fields,
  };
}
