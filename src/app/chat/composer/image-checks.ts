/**
 * @module
 * What the composer says of images before they are sent: a model that does not see them stops
 * Send with a sentence (never a 400 after the fact), and a server's model, whose server decides,
 * gets a note. Pure: no DOM.
 */
import type { CatalogModel } from '../../shared/api-client';
import type { Conversation } from '../../conversations/conversation';
import { optionText } from '../chat-bar';

/**
 * Why the conversation's images (those it sent, and those attached) cannot go to `model`, or null
 * when they can, or there are none.
 */
export function imagesBlocked(
  model: CatalogModel | undefined,
  conversation: Conversation,
  attached: readonly string[],
): string | null {
  if (model?.vision !== false) return null;
  const sent = conversation.messages.some((m) => m.images?.length);
  if (!sent && attached.length === 0) return null;
  const which = sent ? 'This conversation has images' : 'Images are attached';
  return `${which}, and ${optionText(model)} does not see images: pick a model marked "sees images", or remove them.`;
}

/** What to know before sending images to a server's model (`vision: null`), or null. */
export function imagesNote(
  model: CatalogModel | undefined,
  attached: readonly string[],
): string | null {
  if (model?.vision !== null || model === undefined || attached.length === 0) return null;
  return `Whether ${model.id} takes images is up to its server.`;
}
