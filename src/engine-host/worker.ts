/**
 * @module
 * The engine worker: a dedicated worker of the host tab that owns the engines and their queue,
 * serves every host port the service worker is handed, and publishes the host's status to every
 * tab. Streaming never passes through the tab's main thread.
 */
import catalog from 'virtual:hearth-catalog';
import {
  hostLockName,
  unreachable,
  type PageToWorker,
  type WorkerToPage,
} from '../bridge/messages';
import { HostServer } from '../bridge/server';
import { addedModelsChannelName, type AddedModelsMessage } from '../models/added/added-models';
import { ggufModelFiles, type WebLLMEntry } from '../models/catalog';
import type { CpuFacts } from '../protocol/host/cpu-facts';
import type { GpuFacts } from '../protocol/host/gpu-facts';
import { setInstall } from '../protocol/install';
import { statusChannelName, type StatusMessage } from '../protocol/host/status';
import { DeviceLosses } from './device-losses';
import { Downloads } from './downloads/downloads';
import { EchoEngine } from '../engines/echo/echo-engine';
import { modelSet, probeStore } from './engine-db';
import { LiveCatalog } from './live-catalog';
import { measureGpu, type GpuLike } from './measure-gpu';
import { LocalModels } from './model-service';
import { LlamaEngine } from '../engines/llama/llama-engine';
import { thisPlatform } from '../engines/llama/llama-runtime';
import { cpuPlatform, measureCpu } from '../engines/llama/cpu-probe';
import { usePageWorkers } from './page-workers';
import { benchHook } from './bench-hook';
import { EngineQueue } from './queue';
import { Throttle } from './throttle';
import { WebLLMEngine } from '../engines/webllm/webllm-engine';
// The service worker's store of the models the user added, which this worker reads too.
import { idbAddedStore } from '../../sw/stores/added-store';

/**
 * Status goes out at most this often, and always after the last change: every tab re-renders
 * on it, so under load it must not cost the requests themselves (bench: request_ratio_vs_floor).
 */
const STATUS_INTERVAL_MS = 250;
/**
 * How long a change waits before it is published: a request's start changes the status, and the
 * tabs that re-render it would otherwise compete with the engine for the processor right when it
 * computes the first token (bench: real_ttft_added_ms, 11.5 ms over direct without it).
 */
const STATUS_SETTLE_MS = 120;
/**
 * How long the host waits for the WebGPU adapter and the CPU probe before it takes requests: the
 * service worker judges every model by what was measured, so it should not see a host without the
 * facts, but an adapter that is slow to answer must not keep the echo engine from serving.
 */
const MEASURE_WAIT_MS = 1000;

/** Opened at `worker/init`, once this worker knows its install (its name carries the install). */
let statusChannel: BroadcastChannel | undefined;
let lastPublished = '';
const publish = new Throttle(
  STATUS_INTERVAL_MS,
  () => {
    if (!server) return;
    const status = server.status();
    const text = JSON.stringify(status);
    if (text === lastPublished) return;
    lastPublished = text;
    statusChannel?.postMessage({ type: 'status', status } satisfies StatusMessage);
  },
  STATUS_SETTLE_MS,
);
let server: HostServer | undefined;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function openStatusChannel(): BroadcastChannel {
  const channel = new BroadcastChannel(statusChannelName());
  channel.addEventListener('message', (event: MessageEvent<StatusMessage>) => {
    if (event.data.type !== 'status/wanted') return;
    lastPublished = ''; // the tab that asks has seen nothing yet
    publish.request();
  });
  return channel;
}

/** llama.cpp's workers are started by the page (page-workers.ts says why). */
const pageWorkers = usePageWorkers((message, transfer) => postMessage(message, transfer));

addEventListener('message', (event: MessageEvent<PageToWorker>) => {
  const message = event.data;
  switch (message.type) {
    case 'worker/init': {
      const host = { id: message.hostId, build: message.build };
      const onChange = () => publish.request();
      const { appUrl, filesUrl } = message;
      setInstall(appUrl);
      statusChannel = openStatusChannel();
      let device: GpuFacts | null = null;
      // Null while the probe runs; undefined once it failed: this host will not say (a host of an
      // older build has no such field either), and the catalogue judges without the speed.
      let cpu: CpuFacts | null | undefined = null;
      // The GPU's facts and the CPU's probe (kept per device: it runs on a first visit only), both
      // before the host takes requests, within MEASURE_WAIT_MS, so no model's fit is unknown long.
      const measured = Promise.all([
        measureGpu((navigator as { gpu?: GpuLike }).gpu).then((facts) => {
          device = facts;
          onChange();
        }),
        measureCpu(cpuPlatform(thisPlatform()), probeStore).then(
          (facts) => {
            cpu = facts;
            onChange();
          },
          // A probe that fails must never keep the host from taking requests, nor leave a fit
          // unknown for good.
          () => {
            cpu = undefined;
            onChange();
          },
        ),
      ]);
      const losses = new DeviceLosses();
      // Built-in and added models, read again whenever the service worker says they changed.
      const live = new LiveCatalog(catalog, idbAddedStore, { onChange });
      // Servers' models are the service worker's alone: only added GGUFs concern the engines.
      new BroadcastChannel(addedModelsChannelName()).onmessage = (
        event: MessageEvent<AddedModelsMessage>,
      ) => {
        if (event.data.type === 'added-models/changed') void live.refresh();
      };
      const downloaded = modelSet('downloaded');
      const webllm = new WebLLMEngine({
        catalog: catalog.filter((e): e is WebLLMEntry => e.engine === 'webllm'),
        appUrl,
        caches,
        onChange,
        losses,
      });
      // `npm run bench` only: it sets llama.cpp's threads and calls the engine directly.
      const bench = import.meta.env.VITE_HEARTH_BENCH === '1' ? benchHook() : null;
      const llama = new LlamaEngine({
        catalog: () => live.gguf(),
        appUrl,
        filesUrl,
        caches,
        onChange,
        gpu: () => device,
        ...(bench && { platform: bench.platform }),
      });
      bench?.serve(llama);
      const engines = new EngineQueue([new EchoEngine(), webllm, llama], {
        onChange,
        // The user asked for this model: one marked failing is tried again.
        beforeLoad: (model): Promise<void> => models.clearFailing(model),
      });
      const downloads = new Downloads({
        catalog: live.entries,
        appUrl,
        caches,
        fetch: (url, init) => fetch(url, init),
        pending: modelSet('downloads'),
        downloaded,
        onChange,
        onEnd: (progress) => void models.downloadEnded(progress),
        online: () => navigator.onLine,
      });
      const models = new LocalModels({
        catalog: live.entries,
        appUrl,
        caches,
        downloads,
        queue: engines,
        engines: [webllm, llama],
        forgetLosses: (model) => losses.clear(model),
        downloaded,
        onChange,
        // From the store itself: a failed read throws, and then nothing is swept.
        usedFiles: async () => new Set((await idbAddedStore.list()).flatMap(ggufModelFiles)),
      });
      server = new HostServer(live.backend(engines), {
        status: () => ({
          host,
          models: engines.models,
          loaded_model: engines.loadedModel,
          loaded_embedding_model: llama.besideModel,
          loads: engines.loads,
          loading: webllm.loading ?? llama.loading,
          load_error: engines.loadError,
          failing_models: { ...webllm.failing },
          // The engine with a model loaded answered last: one model is loaded at a time.
          last_speed: llama.loadedModel !== null ? llama.lastSpeed : webllm.lastSpeed,
          downloads: downloads.active,
          evicted_models: { ...models.evicted },
          queue: engines.counts,
          device,
          cpu,
          llama: llama.runtime,
        }),
        onChange,
        models: live.service(models),
        // pdf.js and this reader are imported with the first PDF: the worker's first load is as it was.
        readPdf: async (bytes, filename, signal) =>
          (await import('./documents/pdf-text')).pdfSections(bytes, filename, signal),
      });
      // What the last host left: its unfinished downloads go on here, and what was stored is
      // checked against what was downloaded.
      void live
        .refresh()
        .then(() => llama.refresh())
        .then(() => models.reconcile())
        .then(() => downloads.resume());
      // Held for the worker's whole life: the service worker, asking for the same lock, is
      // granted it the moment this host is gone (a closed tab gives no event on its ports).
      void navigator.locks.request(hostLockName(message.hostId), async () => {
        await Promise.race([measured, sleep(MEASURE_WAIT_MS)]);
        postMessage({ type: 'worker/ready' } satisfies WorkerToPage);
        return new Promise(() => {});
      });
      if (message.preload) engines.preload(message.preload);
      onChange();
      return;
    }
    case 'worker/port':
      server?.attach(message.port);
      return;
    case 'worker/spawned-error':
      pageWorkers(message);
      return;
    default:
      unreachable(message);
  }
});
