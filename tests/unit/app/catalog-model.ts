/** A catalogue model as the app reads it, for the app's unit tests: a downloaded GGUF by default. */
import type { CatalogModel } from '../../../src/app/shared/api-client';

export function catalogModel(id: string, extra: Partial<CatalogModel> = {}): CatalogModel {
  return {
    id,
    object: 'model',
    owned_by: id.split('/')[0]!,
    engine: 'llama.cpp',
    size_mb: 100,
    vram_required_mb: null,
    context_window: 4096,
    required_features: [],
    available: true,
    downloaded: true,
    loaded: false,
    source: 'curated',
    tools: false,
    reasoning: false,
    vision: false,
    ...extra,
  };
}
