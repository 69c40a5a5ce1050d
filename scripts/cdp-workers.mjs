// Hearth's service worker and engine worker, reached over the Chrome DevTools Protocol: their
// heaps (workers expose no `performance.memory`), and a debugger that can pause an engine.

/**
 * @typedef {object} WorkerSession
 * @property {'service_worker' | 'worker'} type
 * @property {string} url
 * @property {(method: string, params?: object) => Promise<any>} call a CDP command in the worker
 */

/**
 * Opens a CDP session on the app's service worker (`…/sw.js`) and engine worker. Workers are
 * reached through sessions the browser session relays (`Target.sendMessageToTarget`).
 * @param {import('playwright-core').Browser} browser
 * @returns {Promise<{ workers: WorkerSession[]; close: () => Promise<void> }>}
 */
export async function attachToWorkers(browser) {
  const cdp = await browser.newBrowserCDPSession();
  const { targetInfos } = await cdp.send('Target.getTargets');
  const ours = targetInfos.filter(
    (t) =>
      (t.type === 'service_worker' && t.url.endsWith('/sw.js')) ||
      (t.type === 'worker' && t.url.endsWith('/hearth/worker.js')),
  );
  if (ours.length !== 2) {
    throw new Error(`expected the service worker and the engine worker, found ${ours.length}`);
  }
  let next = 0;
  /** @type {Map<number, (result: any) => void>} */
  const pending = new Map();
  cdp.on('Target.receivedMessageFromTarget', ({ message }) => {
    const reply = JSON.parse(message);
    if (reply.id !== undefined) pending.get(reply.id)?.(reply.result);
  });
  /** @type {WorkerSession[]} */
  const workers = [];
  for (const target of ours) {
    const { sessionId } = await cdp.send('Target.attachToTarget', {
      targetId: target.targetId,
      flatten: false,
    });
    workers.push({
      type: /** @type {'service_worker' | 'worker'} */ (target.type),
      url: target.url,
      call: (method, params = {}) =>
        new Promise((resolve) => {
          const id = (next += 1);
          pending.set(id, resolve);
          void cdp.send('Target.sendMessageToTarget', {
            sessionId,
            message: JSON.stringify({ id, method, params }),
          });
        }),
    });
  }
  return { workers, close: () => cdp.detach() };
}

/**
 * Bytes used by the heaps of the app's service worker and engine worker, summed, after full
 * garbage collections.
 * @param {import('playwright-core').Browser} browser
 * @returns {Promise<number>}
 */
export async function workerHeaps(browser) {
  const { workers, close } = await attachToWorkers(browser);
  let total = 0;
  for (const worker of workers) {
    await worker.call('HeapProfiler.collectGarbage');
    await worker.call('HeapProfiler.collectGarbage');
    total += (await worker.call('Runtime.getHeapUsage')).usedSize;
  }
  await close();
  return total;
}
