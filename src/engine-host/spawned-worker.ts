/**
 * @module
 * A worker the page starts for the engine worker (page-workers.ts). Its first message names the
 * script to run and brings the port to the engine worker; from then on the script's
 * `postMessage` goes to that port, and what comes on the port is its `message` events, as if the
 * engine worker had started it.
 */
import type { SpawnedWorkerBoot } from '../bridge/messages';

addEventListener(
  'message',
  (event: MessageEvent<SpawnedWorkerBoot>) => {
    const { url, port } = event.data;
    // The script calls the global `postMessage`, which would reach the page: it reaches the port.
    Object.defineProperty(globalThis, 'postMessage', {
      configurable: true,
      writable: true,
      value: (message: unknown, transfer?: Transferable[] | StructuredSerializeOptions) => {
        if (Array.isArray(transfer)) port.postMessage(message, transfer);
        else port.postMessage(message, transfer);
      },
    });
    import(/* @vite-ignore */ url).then(
      () => {
        // Only now that the script listens: what the engine worker sent so far waited in the port.
        port.onmessage = (message) =>
          dispatchEvent(
            new MessageEvent('message', { data: message.data, ports: [...message.ports] }),
          );
      },
      // The page hears of it as an uncaught error of this worker, and tells the engine worker.
      (err: unknown) => reportError(err),
    );
  },
  { once: true },
);
