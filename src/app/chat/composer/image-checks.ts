/**
 * @module
 * What the composer says of images before they are sent: images attached for a model that does
 * not see them stop Send with a sentence (never a 400 after the fact); the images sent earlier in
 * the conversation are left out of what such a model is sent (./chat-request.ts), and a note says
 * so; a server's model, whose server decides, gets a note. Pure: no DOM.
 */
import type { CatalogModel } from '../../shared/api-client';
import type { Conversation } from '../../conversations/conversation';
import { optionText } from '../chat-bar';

/** Why the images attached cannot go to `model`, or null when they can, or there are none. */
export function imagesBlocked(
  model: CatalogModel | undefined,
  attached: readonly string[],
): string | null {
  if (model?.vision !== false || attached.length === 0) return null;
  return `Images are attached, and ${optionText(model)} does not see images: pick a model marked "sees images", or remove them.`;
}

/**
 * What to know before sending to `model`: that a model that does not see images is sent the
 * conversation's earlier messages without theirs, or that a server's model (`vision: null`) gets
 * images as its server decides; null when there is nothing to say.
 */
export function imagesNote(
  model: CatalogModel | undefined,
  conversation: Conversation,
  attached: readonly string[],
): string | null {
  if (model === undefined) return null;
  if (model.vision === false) {
    const sent = conversation.messages.some((m) => m.images?.length);
    return sent
      ? `${optionText(model)} does not see images: it is sent this conversation's earlier messages without their images.`
      : null;
  }
  if (model.vision !== null || attached.length === 0) return null;
  return `Whether ${model.id} takes images is up to its server.`;
}
