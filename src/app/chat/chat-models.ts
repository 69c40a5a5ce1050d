/**
 * @module
 * Which models a conversation can use, and which one a new conversation starts with.
 */
import { ECHO_MODEL_ID } from '../../models/models';
import type { CatalogModel } from '../shared/api-client';
import { preferences } from '../shared/preferences';

/** The models a conversation can use: on the device, runnable, and not embedding models. */
export function chatModels(models: readonly CatalogModel[]): CatalogModel[] {
  return models.filter((m) => m.available && m.downloaded && !m.embedding);
}

/**
 * A conversation's model before one was chosen: a newcomer with no real model on the device. Its
 * messages wait (the first-run card offers a model) instead of going to the echo test engine,
 * which is a developer's choice, made in the picker.
 */
export const NO_MODEL = '';

const PICKED_KEY = 'hearth:picked-model';

/** The model the user last picked in a conversation's picker: new conversations start with it. */
export function pickedModel(): string | null {
  try {
    return localStorage.getItem(PICKED_KEY);
  } catch {
    return null; // storage blocked
  }
}

/** Remembers the user's pick (the picker's change, not the app's own choice). */
export function rememberPicked(id: string): void {
  try {
    localStorage.setItem(PICKED_KEY, id);
  } catch {
    // storage blocked: new conversations start as the other rules say
  }
}

/**
 * The model a new conversation starts with: the one the user chose in Preferences while it can
 * answer, else the one they last picked in a conversation, else the one on the GPU, else one on
 * the device, else none ({@link NO_MODEL}). Never the echo engine or a server's model unless the
 * user chose it: a newcomer's message never goes to the test engine, and messages leave the
 * device only for a model the user picked.
 */
export function defaultModel(
  models: readonly CatalogModel[],
  preferred: string | null = preferences().defaultModel,
  picked: string | null = pickedModel(),
): string {
  const usable = chatModels(models);
  for (const chosen of [preferred, picked]) {
    if (chosen !== null && usable.some((m) => m.id === chosen)) return chosen;
  }
  const local = usable.filter((m) => m.id !== ECHO_MODEL_ID && !m.leaves_device);
  return (local.find((m) => m.loaded) ?? local[0])?.id ?? NO_MODEL;
}
