import { afterEach, describe, expect, it } from 'vitest';
import type { SpawnedWorkerBoot, WorkerToPage } from '../../../src/bridge/messages';
import { usePageWorkers } from '../../../src/engine-host/page-workers';

/** Node has no ErrorEvent; the browsers' carries `message` as this one does. */
class NodeErrorEvent extends Event {
  readonly message: string;
  constructor(type: string, init: { message?: string } = {}) {
    super(type);
    this.message = init.message ?? '';
  }
}
(globalThis as { ErrorEvent?: unknown }).ErrorEvent ??= NodeErrorEvent;

/** What the engine worker posted to its page, and the `Worker` it now has. */
function engineWorker() {
  const posted: WorkerToPage[] = [];
  const original = (globalThis as { Worker?: unknown }).Worker;
  const onPageMessage = usePageWorkers((message) => posted.push(message));
  const EngineWorker = (globalThis as unknown as { Worker: typeof Worker }).Worker;
  return {
    posted,
    onPageMessage,
    EngineWorker,
    restore: () => (globalThis.Worker = original as typeof Worker),
  };
}

const next = <T>(port: MessagePort) =>
  new Promise<MessageEvent<T>>((resolve) => (port.onmessage = resolve));

const ports: MessagePort[] = [];
afterEach(() => {
  for (const port of ports.splice(0)) port.close();
});

describe('workers the engine worker starts', () => {
  it('are started by the page, with a port that carries messages both ways, transfers included', async () => {
    const { posted, EngineWorker, restore } = engineWorker();
    const worker = new EngineWorker('blob:https://app.example/llama', { type: 'module' });
    restore();
    expect(posted).toHaveLength(1);
    const spawn = posted[0] as Extract<WorkerToPage, { type: 'worker/spawn' }>;
    expect(spawn).toMatchObject({
      type: 'worker/spawn',
      boot: { url: 'blob:https://app.example/llama' },
    });
    const { port } = spawn.boot as SpawnedWorkerBoot;
    ports.push(port);

    // Posted before the page started it: it waits in the port.
    const buffer = new Uint8Array([1, 2, 3]).buffer;
    worker.postMessage({ verb: 'module.init', buffer }, [buffer]);
    expect(buffer.byteLength).toBe(0);
    const atWorker = await next<{ verb: string; buffer: ArrayBuffer }>(port);
    expect(atWorker.data.verb).toBe('module.init');
    expect([...new Uint8Array(atWorker.data.buffer)]).toEqual([1, 2, 3]);

    const heard: unknown[] = [];
    worker.addEventListener('message', (event) =>
      heard.push(['listener', (event as MessageEvent).data]),
    );
    const back = new Promise<MessageEvent>((resolve) => (worker.onmessage = resolve));
    port.postMessage({ verb: 'signal.result', n: 7 });
    expect((await back).data).toEqual({ verb: 'signal.result', n: 7 });
    expect(heard).toEqual([['listener', { verb: 'signal.result', n: 7 }]]);
    worker.terminate();
  });

  it('are stopped by the page when terminated, once', () => {
    const { posted, EngineWorker, restore } = engineWorker();
    const worker = new EngineWorker('blob:https://app.example/a');
    restore();
    const { id, boot } = posted[0] as Extract<WorkerToPage, { type: 'worker/spawn' }>;
    ports.push(boot.port);
    worker.terminate();
    worker.terminate();
    expect(posted.slice(1)).toEqual([{ type: 'worker/terminate', id }]);
  });

  it('hear of an error the page saw in theirs, and only theirs', () => {
    const { posted, onPageMessage, EngineWorker, restore } = engineWorker();
    const first = new EngineWorker('blob:https://app.example/a');
    const second = new EngineWorker('blob:https://app.example/b');
    restore();
    const [a, b] = posted as Extract<WorkerToPage, { type: 'worker/spawn' }>[];
    ports.push(a!.boot.port, b!.boot.port);
    expect(a!.id).not.toBe(b!.id);
    const errors: string[] = [];
    first.onerror = (event) => errors.push(`first: ${(event as ErrorEvent).message}`);
    second.onerror = (event) => errors.push(`second: ${(event as ErrorEvent).message}`);
    onPageMessage({ type: 'worker/spawned-error', id: b!.id, message: 'import failed' });
    expect(errors).toEqual(['second: import failed']);
    first.terminate();
    second.terminate();
  });
});
