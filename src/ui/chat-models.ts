/**
 * @module
 * Which models a conversation can use, and which one a new conversation starts with.
 */
import { ECHO_MODEL_ID } from '../openai/models';
import type { CatalogModel } from './api-client';
import { preferences } from './preferences';

/** The models a conversation can use: on the device, runnable, and not embedding models. */
export function chatModels(models: readonly CatalogModel[]): CatalogModel[] {
  return models.filter((m) => m.available && m.downloaded && !m.embedding);
}

/**
 * The model a new conversation starts with: the one the user chose in Preferences while it can
 * answer, else the one on the GPU, else one on the device, else the echo engine (a test engine,
 * which says so). Never a server's model unless the user chose it: messages leave the device only
 * for a model the user picked.
 */
export function defaultModel(
  models: readonly CatalogModel[],
  preferred: string | null = preferences().defaultModel,
): string {
  const usable = chatModels(models);
  if (preferred !== null && usable.some((m) => m.id === preferred)) return preferred;
  const local = usable.filter((m) => m.id !== ECHO_MODEL_ID && !m.leaves_device);
  return (local.find((m) => m.loaded) ?? local[0])?.id ?? ECHO_MODEL_ID;
}
