/**
 * @module
 * Workers the engine worker needs (llama.cpp's, which wllama starts with `new Worker`) started by
 * its page instead, and joined to the engine worker by a `MessagePort`.
 *
 * Why: in Firefox a worker started from another worker can hang its parent for good. Measured
 * here with Firefox 153 ESR: about one llama.cpp load in 60 never finished, the engine worker's
 * thread stuck in `new Worker` for good, waiting (gdb) on the same condition variable as the new
 * worker's own idle thread; the page was idle. Firefox has the main thread do part of a nested
 * worker's start while its parent waits, so a lost wake-up is the likely cause. With the workers
 * started by the page, about 800 loads in a row all finished (`npm run test:stress`). The port
 * carries every message directly, so nothing of a reply passes through the page's main thread:
 * the page only starts and stops them.
 */
import type { PageToWorker, SpawnedWorkerBoot, WorkerToPage } from '../bridge/messages';

/** What the engine worker needs of its global scope: to post to its page. */
type PostToPage = (message: WorkerToPage, transfer: Transferable[]) => void;

let nextId = 1;
const living = new Map<number, PageWorker>();
let postToPage: PostToPage | undefined;

/**
 * A `Worker` as wllama uses one (`postMessage`, `onmessage`, `onerror`, `terminate`, events),
 * whose worker the page starts. Messages posted before the page has started it wait in the port.
 */
export class PageWorker extends EventTarget {
  onmessage: ((event: MessageEvent) => void) | null = null;
  onmessageerror: ((event: MessageEvent) => void) | null = null;
  onerror: ((event: ErrorEvent) => void) | null = null;
  readonly #id = nextId++;
  readonly #port: MessagePort;
  /** Whether a `message` listener was ever added. */
  #listened = false;

  // The options (wllama asks for a module worker) are the page's to choose: it always starts one.
  constructor(url: string | URL, _options?: WorkerOptions) {
    super();
    if (!postToPage) throw new Error('PageWorker: usePageWorkers() was not called in this worker.');
    const { port1, port2 } = new MessageChannel();
    this.#port = port1;
    // Every llama.cpp token comes this way: `onmessage` (all wllama uses) gets the port's own
    // event, and a copy is made for listeners only where something listens.
    port1.onmessage = (event) => {
      this.onmessage?.(event);
      if (this.#listened) {
        this.dispatchEvent(
          new MessageEvent('message', { data: event.data, ports: [...event.ports] }),
        );
      }
    };
    port1.onmessageerror = (event) => {
      const copy = new MessageEvent('messageerror', { data: event.data });
      this.dispatchEvent(copy);
      this.onmessageerror?.(copy);
    };
    living.set(this.#id, this);
    const boot: SpawnedWorkerBoot = { url: String(url), port: port2 };
    postToPage({ type: 'worker/spawn', id: this.#id, boot }, [port2]);
  }

  override addEventListener(
    type: string,
    listener: EventListenerOrEventListenerObject | null,
    options?: boolean | AddEventListenerOptions,
  ): void {
    if (type === 'message') this.#listened = true;
    super.addEventListener(type, listener, options);
  }

  postMessage(message: unknown, transfer?: Transferable[] | StructuredSerializeOptions): void {
    if (Array.isArray(transfer)) this.#port.postMessage(message, transfer);
    else this.#port.postMessage(message, transfer);
  }

  terminate(): void {
    if (!living.delete(this.#id)) return;
    this.#port.close();
    postToPage?.({ type: 'worker/terminate', id: this.#id }, []);
  }

  /** The page's worker reported an uncaught error. */
  failed(message: string): void {
    const event = new ErrorEvent('error', { message });
    this.dispatchEvent(event);
    this.onerror?.(event);
  }
}

/**
 * Makes `Worker` in this engine worker a `PageWorker`, posting to the page with `post`; returns
 * the handler of the page's reports of their errors.
 */
export function usePageWorkers(
  post: PostToPage,
): (message: Extract<PageToWorker, { type: 'worker/spawned-error' }>) => void {
  postToPage = post;
  (globalThis as { Worker: unknown }).Worker = PageWorker;
  return (message) => living.get(message.id)?.failed(message.message);
}
