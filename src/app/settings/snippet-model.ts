/**
 * @module
 * The model the API panel's snippets name: one a call can reach, never the echo test engine
 * unless the user picked it, and said plainly when the model has to be downloaded first.
 */
import { ECHO_MODEL_ID } from '../../models/models';
import type { CatalogModel } from '../shared/api-client';
import { chatModels } from '../chat/chat-models';
import { recommendedModel } from '../models/model-facts';

/** The id a snippet names, and what to say about it (null: it works as it is). */
export interface SnippetModel {
  id: string;
  note: string | null;
}

/** The placeholder named when no model is known: plainly not a real id. */
const PLACEHOLDER = 'MODEL_ID';

/**
 * The open conversation's model (`conversation`, empty or undefined when none is chosen), else
 * one on this device (the loaded one first), else the recommended one with a word that it must be
 * downloaded, else a placeholder that says what to do. Echo is named only as the conversation's
 * own pick: a newcomer shown it would call a test engine that repeats them.
 */
export function snippetModel(
  conversation: string | undefined,
  catalog: readonly CatalogModel[],
): SnippetModel {
  if (conversation) return { id: conversation, note: null };
  const local = chatModels(catalog).filter((m) => m.id !== ECHO_MODEL_ID && !m.leaves_device);
  const onDevice = local.find((m) => m.loaded) ?? local[0];
  if (onDevice) return { id: onDevice.id, note: null };
  if (catalog.length === 0) {
    return { id: PLACEHOLDER, note: 'Reading which models are on this device…' };
  }
  const recommended = recommendedModel(catalog);
  if (recommended) {
    return {
      id: recommended.id,
      note: `No model is on this device yet: these snippets name ${recommended.id}, the one recommended here. Download it in Models before the first call.`,
    };
  }
  return {
    id: PLACEHOLDER,
    note: `No model is on this device yet, and none is known to run here: add one in Models, and put its id in place of ${PLACEHOLDER}.`,
  };
}
