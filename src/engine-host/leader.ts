/**
 * @module
 * The engine-host election: one tab per origin holds the `hearth:engine-host` Web Lock, starts
 * the engine worker and hands the service worker a port into it — again whenever the service
 * worker asks (`host/wanted`, after a restart) or another one takes control. When the tab
 * closes, the lock passes to the next tab waiting for it.
 */
import {
  PROTOCOL_VERSION,
  type PageToSw,
  type PageToWorker,
  type SwToPage,
  type WorkerToPage,
} from '../bridge/messages';
import { STATUS_CHANNEL, type StatusMessage } from '../openai/status';

/** This tab's part in the election. */
export type HostRole = 'waiting' | 'host' | 'refused';

/** What the election needs from the page. */
export interface ElectionOptions {
  /** The app's build id; the service worker refuses a host of another build. */
  build: string;
  /** Told whenever this tab's role changes. */
  onRole: (role: HostRole, detail?: string) => void;
}

const LOCK_NAME = 'hearth:engine-host';

/**
 * Follows the host's status from now on, so that if this tab takes over it can load the model
 * the previous host had on the GPU.
 */
function followLoadedModel(): () => string | null {
  let loaded: string | null = null;
  const channel = new BroadcastChannel(STATUS_CHANNEL);
  channel.addEventListener('message', (event: MessageEvent<StatusMessage>) => {
    if (event.data.type === 'status') loaded = event.data.status.loaded_model;
  });
  channel.postMessage({ type: 'status/wanted' } satisfies StatusMessage);
  return () => loaded;
}

function postToWorker(worker: Worker, message: PageToWorker, transfer: Transferable[] = []): void {
  worker.postMessage(message, transfer);
}

/** Joins the election; the returned promise settles only if this tab stops being a candidate. */
export async function joinElection(options: ElectionOptions): Promise<void> {
  const container = navigator.serviceWorker;
  const previousModel = followLoadedModel();
  const { held = [] } = await navigator.locks.query();
  if (held.some((lock) => lock.name === LOCK_NAME)) options.onRole('waiting');
  return navigator.locks.request(LOCK_NAME, async () => {
    const hostId = crypto.randomUUID();
    const worker = new Worker(new URL('./worker.ts', import.meta.url), {
      type: 'module',
      name: 'hearth-engine',
    });
    const ready = new Promise<void>((resolve) =>
      worker.addEventListener('message', (event: MessageEvent<WorkerToPage>) => {
        if (event.data.type === 'worker/ready') resolve();
      }),
    );
    postToWorker(worker, {
      type: 'worker/init',
      hostId,
      build: options.build,
      preload: previousModel(),
    });
    await ready;

    const attach = () => {
      const controller = container.controller;
      if (!controller) return;
      const { port1, port2 } = new MessageChannel();
      postToWorker(worker, { type: 'worker/port', port: port1 }, [port1]);
      const message: PageToSw = {
        type: 'host/attach',
        protocol: PROTOCOL_VERSION,
        build: options.build,
        hostId,
        port: port2,
      };
      controller.postMessage(message, [port2]);
    };

    let refused: (reason: string) => void = () => undefined;
    const refusal = new Promise<string>((resolve) => (refused = resolve));
    container.addEventListener('message', (event: MessageEvent<SwToPage>) => {
      const message = event.data;
      if (message.type === 'host/wanted') attach();
      else if (message.type === 'host/accepted' && message.hostId === hostId) {
        options.onRole('host');
      } else if (message.type === 'host/refused' && message.hostId === hostId) {
        refused(message.reason);
      }
    });
    // Messages from the service worker are held back until this is called (or the page loads).
    container.startMessages();
    // A new service worker took control (an update was accepted): it has no port yet.
    container.addEventListener('controllerchange', attach);
    attach();

    // Hold the lock until the service worker refuses us: this tab's code is of another build,
    // so it must not host; give the lock to a tab that can, and report why.
    const reason = await refusal;
    worker.terminate();
    options.onRole('refused', reason);
  });
}
