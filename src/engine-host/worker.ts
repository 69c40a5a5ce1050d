/**
 * @module
 * The engine worker: a dedicated worker of the host tab that owns the engines and their queue,
 * and serves every host port the service worker is handed. Streaming never passes through the
 * tab's main thread.
 */
import type { PageToWorker } from '../bridge/messages';
import { unreachable } from '../bridge/messages';
import { HostServer } from '../bridge/server';
import { EchoEngine } from './echo-engine';
import { EngineQueue } from './queue';

const queue = new EngineQueue([new EchoEngine()]);
let server: HostServer | undefined;

addEventListener('message', (event: MessageEvent<PageToWorker>) => {
  const message = event.data;
  switch (message.type) {
    case 'worker/init': {
      const host = { id: message.hostId, build: message.build };
      server = new HostServer(queue, () => ({
        host,
        loaded_model: queue.loadedModel,
        queue: queue.counts,
      }));
      // Held for the worker's whole life: the service worker, asking for the same lock, is
      // granted it the moment this host is gone (a closed tab gives no event on its ports).
      void navigator.locks.request(`hearth:host:${message.hostId}`, () => new Promise(() => {}));
      return;
    }
    case 'worker/port':
      server?.attach(message.port);
      return;
    default:
      unreachable(message);
  }
});
