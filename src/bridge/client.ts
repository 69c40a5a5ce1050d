/**
 * @module
 * The service worker's `ChatBackend`: each request gets a fresh `MessageChannel` whose far end
 * goes to the engine worker through the host port, so every request streams on its own port
 * and can be cancelled alone.
 */
import type { ChatBackend, ChatEvent, ChatOptions } from '../openai/backend';
import { OpenAIError } from '../openai/errors';
import type { ChatRequest } from '../openai/types';
import { Channel } from './channel';
import {
  replyToEvent,
  type HostPortMessage,
  type HostStatus,
  type ReplyMessage,
  type RequestMessage,
} from './messages';

const STATUS_TIMEOUT_MS = 3000;

/** Resolves to the current host port, or throws 503 `engine_unavailable`. */
export type HostPortSource = () => Promise<MessagePort>;

function cancelled(): OpenAIError {
  return new OpenAIError('engine_error', 'The request was cancelled.');
}

/** Opens a request port on the host and returns our end. */
function openRequestPort(host: MessagePort): MessagePort {
  const { port1, port2 } = new MessageChannel();
  const open: HostPortMessage = { type: 'request/open', port: port2 };
  host.postMessage(open, [port2]);
  return port1;
}

function send(port: MessagePort, message: RequestMessage): void {
  port.postMessage(message);
}

/** A `ChatBackend` that runs requests in the engine worker behind the host port. */
export class PortBackend implements ChatBackend {
  readonly #hostPort: HostPortSource;

  constructor(hostPort: HostPortSource) {
    this.#hostPort = hostPort;
  }

  chat(request: ChatRequest, options: ChatOptions): Channel<ChatEvent> {
    const { signal } = options;
    let port: MessagePort | undefined;
    const finish = () => {
      signal.removeEventListener('abort', onAbort);
      port?.close();
    };
    const onAbort = () => {
      if (port) send(port, { type: 'chat/cancel' });
      finish();
      events.fail(cancelled());
    };
    const events = new Channel<ChatEvent>();
    if (signal.aborted) {
      events.fail(cancelled());
      return events;
    }
    signal.addEventListener('abort', onAbort);
    this.#hostPort().then(
      (host) => {
        if (signal.aborted) return;
        port = openRequestPort(host);
        port.onmessage = (event: MessageEvent<ReplyMessage>) => {
          const message = event.data;
          if (message.type === 'chat/error') {
            finish();
            events.fail(OpenAIError.deserialize(message.error));
            return;
          }
          const chatEvent = replyToEvent(message);
          if (!chatEvent) return;
          events.push(chatEvent);
          if (chatEvent.type === 'end') {
            finish();
            events.close();
          }
        };
        send(port, { type: 'chat/start', requestId: options.requestId ?? '', request });
      },
      (err: unknown) => {
        finish();
        events.fail(OpenAIError.from(err));
      },
    );
    return events;
  }

  /** The host's queue and port counts; 503 when the host does not answer in time. */
  async status(timeoutMs = STATUS_TIMEOUT_MS): Promise<HostStatus> {
    const port = openRequestPort(await this.#hostPort());
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      return await new Promise<HostStatus>((resolve, reject) => {
        timer = setTimeout(
          () => reject(new OpenAIError('engine_unavailable', 'The host tab did not answer.')),
          timeoutMs,
        );
        port.onmessage = (event: MessageEvent<ReplyMessage>) => {
          if (event.data.type === 'status/result') resolve(event.data.status);
        };
        send(port, { type: 'status/get' });
      });
    } finally {
      clearTimeout(timer);
      port.close();
    }
  }
}
