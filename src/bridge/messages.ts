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
import type {
  ChatEvent,
  ChatState,
  ChoiceResult,
  EngineUsage,
  ModelInspection,
  Token,
} from '../protocol/host/backend';
import type { DocumentErrorCode, Section } from '../protocol/host/documents';
import type { DownloadProgress } from '../protocol/host/downloads';
import type { SerializedError } from '../protocol/errors';
import type { HostStatus } from '../protocol/host/status';
import type { ChatRequest, EmbeddingRequest, FinishReason, ToolCall } from '../protocol/types';

/** Bumped whenever any message below changes shape. */
export const PROTOCOL_VERSION = 4;

/** Most tokens in one `chat/tokens` message; bounds the size of a batch from a very fast engine. */
export const MAX_TOKEN_BATCH = 256;

/**
 * Bytes of a reply the engine worker may send ahead of what the service worker's reader has
 * taken (its credit, which `chat/start` carries and `chat/credit` tops up). 1 MiB: minutes of a
 * real model's output, so a reader that keeps up never makes it wait; and a 20,000-token stream
 * of the echo engine at full speed (the benchmark's) fits, where 256 KiB made the engine worker
 * and the service worker take turns and cost a fifth of its rate (0.45–0.53 of the floor, against
 * 0.63–0.69 without flow control, on a 2-core machine).
 */
export const REPLY_WINDOW_BYTES = 1024 * 1024;

/** What a token costs in memory besides its text (its string and array slot, roughly). */
const TOKEN_OVERHEAD_BYTES = 32;

function textBytes(text: string): number {
  return TOKEN_OVERHEAD_BYTES + 2 * text.length;
}

/**
 * The bytes a chat event is counted as against its request's window: about what it holds in
 * memory (UTF-16 text and a fixed cost per token), computed alike on both sides of the port.
 */
export function eventBytes(event: ChatEvent): number {
  switch (event.type) {
    case 'tokens': {
      let bytes = 0;
      for (const token of event.tokens) {
        if (typeof token === 'string') {
          bytes += textBytes(token);
          continue;
        }
        bytes += textBytes(token.text);
        for (const logprob of token.logprobs ?? []) {
          for (const one of [logprob, ...logprob.top_logprobs])
            bytes += textBytes(one.token) + 8 * (one.bytes?.length ?? 0);
        }
      }
      return bytes;
    }
    case 'tool_calls':
      return textBytes(JSON.stringify(event.calls));
    case 'choices':
      return textBytes(JSON.stringify(event.choices));
    case 'embeddings':
      return TOKEN_OVERHEAD_BYTES + event.vectors.reduce((n, v) => n + v.byteLength, 0);
    case 'state':
    case 'end':
      return TOKEN_OVERHEAD_BYTES;
    default:
      return unreachable(event);
  }
}

/**
 * The Web Lock an engine worker holds for its whole life. The service worker asks for it too: it
 * is granted the moment the host is gone, which a closed tab tells no `MessagePort`.
 */
export function hostLockName(hostId: string): string {
  return `hearth:host:${hostId}`;
}

/** A page (the elected host tab) → the service worker. */
export type PageToSw =
  | {
      type: 'host/attach';
      protocol: number;
      build: string;
      hostId: string;
      /** The service worker's end of a channel into the engine worker. */
      port: MessagePort;
    }
  /**
   * The user accepted the update waiting to take over (never on its own: docs/architecture.md,
   * Offline, installation and updates).
   */
  | { type: 'update/apply' }
  /**
   * A loader asks which build the service worker runs, answered on `port` with
   * `hearth/version`: a site that copied a new loader beside an old `hearth-sw.js` is told so.
   */
  | { type: 'hearth/version'; port: MessagePort };

/** The service worker's answer to `hearth/version`, on the port that came with it. */
export interface VersionReply {
  type: 'hearth/version';
  build: string;
  protocol: number;
}

/** The active service worker → the waiting one: its requests are done, take over now. */
export type SwToSw = { type: 'update/skip-waiting' };

/** The service worker → pages. */
export type SwToPage =
  /** The service worker has no host port (e.g. after a restart): the host should attach. */
  | { type: 'host/wanted' }
  | { type: 'host/accepted'; hostId: string }
  /** The host speaks another protocol or build; it must reload to serve. */
  | { type: 'host/refused'; hostId: string; reason: string };

/** The page → its engine worker. */
export type PageToWorker =
  /** `preload`: the model the previous host had on the GPU, to load again. */
  | {
      type: 'worker/init';
      hostId: string;
      build: string;
      /** The app's address, against which self-hosted model URLs resolve. */
      appUrl: string;
      /**
       * Where Hearth's own files are served (the app's base, or a site's `{base}hearth/`):
       * llama.cpp's compatibility build lies under it.
       */
      filesUrl: string;
      preload: string | null;
    }
  /** The engine worker's end of a new host port. */
  | { type: 'worker/port'; port: MessagePort }
  /** A worker the page started for the engine worker (`worker/spawn`) threw and did not catch. */
  | { type: 'worker/spawned-error'; id: number; message: string };

/** The engine worker → its page. */
export type WorkerToPage =
  /**
   * The worker holds its host lock. Only then may the page hand the service worker a port: the
   * service worker asks for the same lock, and would otherwise be granted it at once and take
   * the host for dead.
   */
  | { type: 'worker/ready' }
  /**
   * Start a worker for the engine worker (engine-host/page-workers.ts: in Firefox a worker started
   * from a worker can hang its parent), joined to it by `boot.port`.
   */
  | { type: 'worker/spawn'; id: number; boot: SpawnedWorkerBoot }
  /** Stop the worker started for `worker/spawn` of this id. */
  | { type: 'worker/terminate'; id: number };

/** What a worker the page starts for the engine worker is first sent: what to run, and its port. */
export interface SpawnedWorkerBoot {
  /** The script to run, as the engine worker named it (a `blob:` URL of the same origin). */
  url: string;
  /** Its end of the port to the engine worker: what it posts goes there, and what comes is its. */
  port: MessagePort;
}

/**
 * On the host port: the service worker opens one request port per request, and sends the
 * request's first message with it (one hop less before the first token).
 */
export type HostPortMessage = { type: 'request/open'; port: MessagePort; first: RequestMessage };

/** On a request port, service worker → engine worker. */
export type RequestMessage =
  /**
   * `window`: the bytes of reply (`eventBytes`) the worker may send before it needs credit;
   * `creditWaitMs`: how long it waits for credit before it takes the service worker for gone.
   */
  | {
      type: 'chat/start';
      requestId: string;
      request: ChatRequest;
      window: number;
      creditWaitMs: number;
    }
  /** An embeddings request: answered by `embed/vectors` (or `chat/error`); `chat/cancel` stops it. */
  | { type: 'embed/start'; requestId: string; request: EmbeddingRequest }
  /**
   * A PDF's text, read by pdf.js: answered by `extract/sections`, `extract/failed` (the file is
   * no readable PDF) or `chat/error`; `chat/cancel` stops it.
   */
  | { type: 'extract/start'; requestId: string; bytes: Uint8Array; filename: string }
  | { type: 'chat/cancel' }
  /** The reader took `bytes` of the reply: the worker may send that much more. */
  | { type: 'chat/credit'; bytes: number }
  /** Put a model on the GPU; answered by `model/loaded` or `chat/error`. */
  | { type: 'model/load'; requestId: string; model: string }
  /** Start or join a download; answered by `model/progress` until it ends, then the port closes. */
  | { type: 'model/download'; model: string }
  | { type: 'model/cancel-download'; model: string }
  | { type: 'model/delete'; model: string }
  | { type: 'model/unload' }
  | { type: 'model/inspect'; model: string }
  /** The answer to `chat/ask-alive`. */
  | { type: 'chat/alive'; alive: boolean }
  | { type: 'status/get' };

/** On a request port, engine worker → service worker. */
export type ReplyMessage =
  | { type: 'chat/state'; state: ChatState }
  /** Tokens produced since the last message, batched so a fast engine costs few messages. */
  | { type: 'chat/tokens'; tokens: Token[] }
  | { type: 'chat/tool_calls'; calls: ToolCall[] }
  | { type: 'chat/choices'; choices: ChoiceResult[] }
  | { type: 'chat/end'; finish_reason: FinishReason; usage: EngineUsage | null }
  /** An embeddings request's answer, which ends it. */
  | { type: 'embed/vectors'; vectors: Float32Array[]; prompt_tokens: number | null }
  /** A PDF's text, a section a page, which ends an `extract/start`. */
  | { type: 'extract/sections'; sections: Section[] }
  /** The file is no PDF pdf.js can read, or has no text: a `DocumentError`'s data. */
  | { type: 'extract/failed'; code: DocumentErrorCode; message: string }
  | { type: 'chat/error'; error: SerializedError }
  /** The request reached the engine after waiting: is the page that sent it still there? */
  | { type: 'chat/ask-alive' }
  | { type: 'model/loaded'; model: string }
  | { type: 'model/progress'; progress: DownloadProgress }
  /** A management request (cancel, delete, unload) is done. */
  | { type: 'model/done' }
  | { type: 'model/inspection'; inspection: ModelInspection }
  | { type: 'status/result'; status: HostStatus };

/** The `ChatEvent` a reply message carries, if any. */
export function replyToEvent(message: ReplyMessage): ChatEvent | undefined {
  switch (message.type) {
    case 'chat/state':
      return { type: 'state', state: message.state };
    case 'chat/tokens':
      return { type: 'tokens', tokens: message.tokens };
    case 'chat/tool_calls':
      return { type: 'tool_calls', calls: message.calls };
    case 'chat/choices':
      return { type: 'choices', choices: message.choices };
    case 'chat/end':
      return { type: 'end', finish_reason: message.finish_reason, usage: message.usage };
    case 'embed/vectors':
      return { type: 'embeddings', vectors: message.vectors, prompt_tokens: message.prompt_tokens };
    case 'extract/sections':
    case 'extract/failed':
    case 'chat/error':
    case 'chat/ask-alive':
    case 'model/loaded':
    case 'model/progress':
    case 'model/done':
    case 'model/inspection':
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
