/**
 * @module
 * Every message between the page, the service worker and the engine worker, as discriminated
 * unions keyed by `type` (`area/verb`). Errors travel as `SerializedError` data.
 *
 * Three kinds of channel carry them:
 * - page ⇄ service worker (`postMessage` on the registration / clients): `PageToSw`, `SwToPage`;
 * - the host port, service worker → engine worker, one per hand-over: `HostPortMessage`;
 * - a request port, one per request, both ways: `RequestMessage` and `ReplyMessage`.
 */
import type { ChatEvent, ChatState, EngineUsage } from '../openai/backend';
import type { SerializedError } from '../openai/errors';
import type { ChatRequest, FinishReason } from '../openai/types';

/** Bumped whenever any message below changes shape. */
export const PROTOCOL_VERSION = 1;

/** Queue and port counts of one host, for `/v1/hearth/status`. */
export interface HostStatus {
  host: { id: string; build: string };
  loaded_model: string | null;
  queue: { running: number; waiting: number };
  /** Request ports the engine worker holds open. */
  open_ports: number;
}

/** A page (the elected host tab) → the service worker. */
export type PageToSw = {
  type: 'host/attach';
  protocol: number;
  build: string;
  hostId: string;
  /** The service worker's end of a channel into the engine worker. */
  port: MessagePort;
};

/** The service worker → pages. */
export type SwToPage =
  /** The service worker has no host port (e.g. after a restart): the host should attach. */
  | { type: 'host/wanted' }
  | { type: 'host/accepted'; hostId: string }
  /** The host speaks another protocol or build; it must reload to serve. */
  | { type: 'host/refused'; hostId: string; reason: string };

/** The page → its engine worker. */
export type PageToWorker =
  | { type: 'worker/init'; hostId: string; build: string }
  /** The engine worker's end of a new host port. */
  | { type: 'worker/port'; port: MessagePort };

/** On the host port: the service worker opens one request port per request. */
export type HostPortMessage = { type: 'request/open'; port: MessagePort };

/** On a request port, service worker → engine worker. */
export type RequestMessage =
  | { type: 'chat/start'; requestId: string; request: ChatRequest }
  | { type: 'chat/cancel' }
  | { type: 'status/get' };

/** On a request port, engine worker → service worker. */
export type ReplyMessage =
  | { type: 'chat/state'; state: ChatState }
  /** Tokens produced since the last message, batched so a fast engine costs few messages. */
  | { type: 'chat/tokens'; tokens: string[] }
  | { type: 'chat/end'; finish_reason: FinishReason; usage: EngineUsage }
  | { type: 'chat/error'; error: SerializedError }
  | { type: 'status/result'; status: HostStatus };

/** The `ChatEvent` a reply message carries, if any. */
export function replyToEvent(message: ReplyMessage): ChatEvent | undefined {
  switch (message.type) {
    case 'chat/state':
      return { type: 'state', state: message.state };
    case 'chat/tokens':
      return { type: 'tokens', tokens: message.tokens };
    case 'chat/end':
      return { type: 'end', finish_reason: message.finish_reason, usage: message.usage };
    case 'chat/error':
    case 'status/result':
      return undefined;
    default:
      return unreachable(message);
  }
}

/** Exhaustiveness check for `switch` over a union. */
export function unreachable(value: never): never {
  throw new Error(`Unexpected message: ${JSON.stringify(value)}`);
}
