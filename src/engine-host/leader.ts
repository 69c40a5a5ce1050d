/**
 * @module
 * src/engine-host/ is the engine host: the election of one host tab per install (leader.ts, the
 * module the page imports), the engine worker, its queue in front of the engines, the model
 * service, downloads (downloads/), the live catalogue, device losses, GPU measures and the
 * workers the page starts for it. It imports src/engines, src/bridge, src/protocol, src/models
 * and src/api; nothing in those imports it (but the WebLLM engine's device losses).
 *
 * The engine-host election: one tab per install holds the `hearth:engine-host` Web Lock, starts
 * the engine worker and hands the service worker a port into it — again whenever the service
 * worker asks (`host/wanted`, after a restart) or another one takes control. When the tab
 * closes, the lock passes to the next tab waiting for it; when the engine worker dies, the tab
 * starts a new one.
 */
import {
  hostLockName,
  PROTOCOL_VERSION,
  type PageToSw,
  type PageToWorker,
  type SwToPage,
  type WorkerToPage,
} from '../bridge/messages';
import { installName, setInstall } from '../protocol/install';
import { statusChannelName, type StatusMessage } from '../protocol/host/status';

/** This tab's part in the election. */
export type HostRole = 'waiting' | 'host' | 'refused';

/** What the election needs from the page. */
export interface ElectionOptions {
  /** The app's build id; the service worker refuses a host of another build. */
  build: string;
  /**
   * The install's base URL (absolute, ending in `/`): the service worker's scope, under which
   * the API answers. The election, its lock and its channels are this install's alone.
   */
  appUrl: string;
  /** Where Hearth's own files are served: the app's base, or a site's `{base}hearth/`. */
  filesUrl: string;
  /** Told whenever this tab's role changes. */
  onRole: (role: HostRole, detail?: string) => void;
  /** Ends this tab's candidacy, and its engine if it hosts one: the lock passes on. */
  signal?: AbortSignal;
}

/** A worker that lived this long before dying is restarted at once; sooner, after a pause. */
const HEALTHY_LIFE_MS = 30_000;
const MAX_RESTART_PAUSE_MS = 30_000;

/**
 * Follows the host's status from now on, so that if this tab takes over it can load the model
 * the previous host had on the GPU.
 */
function followLoadedModel(): () => string | null {
  let loaded: string | null = null;
  const channel = new BroadcastChannel(statusChannelName());
  channel.addEventListener('message', (event: MessageEvent<StatusMessage>) => {
    if (event.data.type === 'status') loaded = event.data.status.loaded_model;
  });
  channel.postMessage({ type: 'status/wanted' } satisfies StatusMessage);
  return () => loaded;
}

/** How one engine worker's life ended. */
type Ending = { type: 'died' } | { type: 'refused'; reason: string } | { type: 'stopped' };

/** One engine worker, from its start to its death, and its hand-overs to the service worker. */
class EngineHost {
  readonly #id = crypto.randomUUID();
  readonly #build: string;
  readonly #worker: Worker;
  readonly #onRole: ElectionOptions['onRole'];
  #end: (ending: Ending) => void = () => undefined;
  /** Workers started for the engine worker (`worker/spawn`), by its ids: they die with it. */
  readonly #spawned = new Map<number, Worker>();
  /**
   * Whether the worker holds its host lock: only then may the service worker have a port, or it
   * would be granted the lock at once and take the host for dead. Cleared when the worker dies.
   */
  #serving = false;

  constructor({ build, appUrl, filesUrl, onRole }: ElectionOptions, preload: string | null) {
    this.#build = build;
    this.#onRole = onRole;
    this.#worker = new Worker(new URL('./worker.ts', import.meta.url), {
      type: 'module',
      name: 'hearth-engine',
    });
    this.#post({ type: 'worker/init', hostId: this.#id, build, appUrl, filesUrl, preload });
  }

  #post(message: PageToWorker, transfer: Transferable[] = []): void {
    this.#worker.postMessage(message, transfer);
  }

  /** Runs until the worker dies or the service worker refuses this build. */
  async run(): Promise<Ending> {
    const ending = new Promise<Ending>((resolve) => (this.#end = resolve));
    const ready = new Promise<boolean>((resolve) => {
      this.#worker.addEventListener('message', (event: MessageEvent<WorkerToPage>) => {
        const message = event.data;
        if (message.type === 'worker/ready') resolve(true);
        else if (message.type === 'worker/spawn') this.#spawn(message);
        else if (message.type === 'worker/terminate') {
          this.#spawned.get(message.id)?.terminate();
          this.#spawned.delete(message.id);
        }
      });
      // A worker that cannot even start (its script failed) never says it is ready.
      this.#worker.addEventListener('error', () => resolve(false), { once: true });
    });
    // Stopped while starting: the worker never says it is ready, and is ended all the same.
    if (!(await Promise.race([ready, ending.then(() => false)]))) {
      this.#worker.terminate();
      return (await Promise.race([ending, Promise.resolve(null)])) ?? { type: 'died' };
    }
    this.#serving = true;
    // The worker holds its host lock for its whole life: this request is granted when it dies.
    void navigator.locks.request(hostLockName(this.#id), () => this.#end({ type: 'died' }));
    this.attach();
    const result = await ending;
    this.#serving = false;
    this.#worker.terminate();
    for (const spawned of this.#spawned.values()) spawned.terminate();
    this.#spawned.clear();
    return result;
  }

  /** Ends this host: its worker and the workers it started are terminated. */
  stop(): void {
    this.#end({ type: 'stopped' });
  }

  /** Starts a worker for the engine worker (page-workers.ts says why the page does it). */
  #spawn({ id, boot }: Extract<WorkerToPage, { type: 'worker/spawn' }>): void {
    const spawned = new Worker(new URL('./spawned-worker.ts', import.meta.url), {
      type: 'module',
      name: 'hearth-engine-helper',
    });
    spawned.addEventListener('error', (event) => {
      event.preventDefault();
      this.#post({ type: 'worker/spawned-error', id, message: event.message || 'error' });
    });
    spawned.postMessage(boot, [boot.port]);
    this.#spawned.set(id, spawned);
  }

  /** Hands the service worker that controls the page a new port into the engine worker. */
  attach(): void {
    const controller = navigator.serviceWorker.controller;
    if (!controller || !this.#serving) return;
    const { port1, port2 } = new MessageChannel();
    this.#post({ type: 'worker/port', port: port1 }, [port1]);
    const message: PageToSw = {
      type: 'host/attach',
      protocol: PROTOCOL_VERSION,
      build: this.#build,
      hostId: this.#id,
      port: port2,
    };
    controller.postMessage(message, [port2]);
  }

  /** A message from the service worker. */
  onMessage(message: SwToPage): void {
    if (message.type === 'host/wanted') this.attach();
    else if (message.type === 'host/accepted' && message.hostId === this.#id) {
      this.#onRole('host');
    } else if (message.type === 'host/refused' && message.hostId === this.#id) {
      this.#end({ type: 'refused', reason: message.reason });
    }
  }
}

/** Joins the election; the returned promise settles only if this tab stops being a candidate. */
export async function joinElection(options: ElectionOptions): Promise<void> {
  const container = navigator.serviceWorker;
  setInstall(options.appUrl);
  const lockName = installName('hearth:engine-host');
  const previousModel = followLoadedModel();
  let granted = false;
  const { signal } = options;
  const candidacy = navigator.locks.request(lockName, { ...(signal && { signal }) }, async () => {
    granted = true;
    let host: EngineHost | undefined;
    const onAbort = () => host?.stop();
    signal?.addEventListener('abort', onAbort);
    const onMessage = (event: MessageEvent<SwToPage>) => host?.onMessage(event.data);
    // A new service worker took control (an update was accepted): it has no port yet.
    const onControllerChange = () => host?.attach();
    container.addEventListener('message', onMessage);
    container.addEventListener('controllerchange', onControllerChange);
    // Messages from the service worker are held back until this is called (or the page loads).
    container.startMessages();
    try {
      let pauseMs = 0;
      while (!signal?.aborted) {
        const started = Date.now();
        host = new EngineHost(options, previousModel());
        const ending = await host.run();
        host = undefined;
        if (ending.type === 'stopped') return;
        if (ending.type === 'refused') {
          // This tab's code is of another build: give the lock to a tab that can host.
          options.onRole('refused', ending.reason);
          return;
        }
        // The worker died (crashed, or was killed): start another, pausing if it keeps dying.
        pauseMs =
          Date.now() - started > HEALTHY_LIFE_MS
            ? 0
            : Math.min(MAX_RESTART_PAUSE_MS, pauseMs * 2 || 1000);
        console.warn(`Hearth: the engine worker stopped; starting a new one in ${pauseMs} ms.`);
        await new Promise((resolve) => setTimeout(resolve, pauseMs));
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      container.removeEventListener('message', onMessage);
      container.removeEventListener('controllerchange', onControllerChange);
    }
  });
  // Asked only once this tab's request is queued: asked before, another tab could take the lock
  // in between (two tabs reloading together after an update), and this one would never say it
  // waits.
  const { held = [] } = await navigator.locks.query();
  if (!granted && held.some((lock) => lock.name === lockName)) options.onRole('waiting');
  // A candidacy withdrawn before the lock was granted ends here, quietly.
  return candidacy.then(
    () => undefined,
    (err: unknown) => {
      if (!signal?.aborted) throw err;
    },
  );
}
