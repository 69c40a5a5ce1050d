/**
 * @module
 * The body of a chat request as the chat sends it: the conversation's parameters, each sent only
 * when it says something (an empty top P or seed is the model's own or a random one), and its
 * messages cut to its context limit; a model that does not see images gets the messages without
 * their images. Pure: no DOM, no storage.
 */
import { ECHO_MODEL_ID } from '../../models/models';
import type { ChatSettings, OutgoingMessage } from '../shared/api-client';
import { withDefaults } from '../shared/chat-settings';
import { estimateContentTokens, type ConversationSettings } from '../conversations/conversation';

/**
 * The messages that fit in `limit` tokens (estimated as the context meter does): the system
 * prompt always, then the latest messages, the last one always, starting with the user's (chat
 * templates expect the user first). Null: all of them.
 */
export function fitContext(messages: OutgoingMessage[], limit: number | null): OutgoingMessage[] {
  if (limit === null) return messages;
  const system = messages.filter((m) => m.role === 'system');
  const rest = messages.filter((m) => m.role !== 'system');
  let room = limit - system.reduce((n, m) => n + estimateContentTokens(m.content), 0);
  let from = rest.length;
  while (from > 0) {
    const tokens = estimateContentTokens(rest[from - 1]!.content);
    if (from < rest.length && tokens > room) break;
    room -= tokens;
    from -= 1;
  }
  while (from < rest.length - 1 && rest[from]!.role === 'assistant') from += 1;
  return [...system, ...rest.slice(from)];
}

/**
 * `messages` for a model that does not see images: each message's text alone (the composer says
 * so, and refuses images attached for such a model, rather than let the API answer 400).
 */
export function withoutImages(messages: OutgoingMessage[]): OutgoingMessage[] {
  return messages.map((m) =>
    typeof m.content === 'string'
      ? m
      : { ...m, content: m.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n') },
  );
}

/**
 * The request for `model` with `messages` under `settings` (read field by field, so that a value
 * stored wrong is never sent); `echoDelay`: the echo engine's pause per token; `fileSearch`: the
 * conversation's vector store, searched for the passages the model is given to cite.
 */
export function chatRequest(
  model: string,
  settings: ConversationSettings,
  messages: OutgoingMessage[],
  echoDelay = 0,
  fileSearch?: { vector_store_ids: string[] },
): ChatSettings {
  const s = withDefaults(settings);
  return {
    model,
    messages: fitContext(messages, s.context_tokens),
    temperature: s.temperature,
    ...(s.top_p !== null && { top_p: s.top_p }),
    ...(s.seed !== null && { seed: s.seed }),
    ...(s.stop.length > 0 && { stop: s.stop }),
    ...(s.max_tokens !== null && { max_completion_tokens: s.max_tokens }),
    ...(model === ECHO_MODEL_ID && echoDelay > 0 && { echo_delay_ms: echoDelay }),
    ...(fileSearch && { file_search: fileSearch }),
  };
}
