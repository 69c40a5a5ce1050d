/**
 * @module
 * Measures the processor in the engine worker, where llama.cpp runs: a short probe of how fast one
 * thread multiplies a matrix of Float32 weights by a vector, kept per device in the engine
 * worker's database so it runs once, not at every host start. The service worker judges each
 * GGUF's fit from it (src/models/fit.ts): decoding a token reads every weight once, so the speed
 * at which a thread gets through weights bounds the tokens per second.
 */
import type { CpuFacts } from '../../protocol/host/cpu-facts';
import { llamaThreads, type LlamaPlatform } from './llama-runtime';

/**
 * The probe's matrix: 4,096 rows of 512 Float32 weights, 8 MB — past most processors' L2 cache,
 * as a model's weights are, and one pass takes 1–3 ms on a laptop core, so several runs of passes
 * fit the budget and the best of them is a fair figure.
 */
const ROWS = 4096;
const COLS = 512;
/** How long the probe runs: long enough for the JIT to settle, short enough not to be felt. */
export const PROBE_BUDGET_MS = 50;
/**
 * Passes are timed in runs of at least this long: a worker's clock may be coarsened to 1 ms
 * (Firefox without isolation), and a single 2 ms pass read on it could seem twice as fast.
 */
const RUN_MS = 10;
/** Runs the probe takes whatever the clock says: the first (compiling) is never the figure. */
const MIN_RUNS = 3;
/** A clock that never moves must not hold the worker for ever. */
const MAX_PASSES = 5000;

/** What the probe found: the best run's bytes of weights per second, and how many passes ran. */
export interface ProbeResult {
  bytesPerSecond: number;
  passes: number;
}

/**
 * Times `y = W·x` for about `budgetMs`, in runs of passes of at least 10 ms each, and gives the
 * best run's speed in bytes of `W` per second. The best, not the mean: on a shared machine another
 * task's slice of the processor only ever slows a run, so the fastest is the closest to what the
 * processor can do. `now` is the clock (`performance.now`), given so the arithmetic can be tested.
 */
export function probeMatvec(
  now: () => number = () => performance.now(),
  budgetMs = PROBE_BUDGET_MS,
): ProbeResult {
  const weights = new Float32Array(ROWS * COLS);
  const x = new Float32Array(COLS);
  const y = new Float32Array(ROWS);
  // Values that are not all zero or all equal, so no engine can shortcut the arithmetic: one row
  // computed, then copied on in doubling blocks (a loop over all 8 MB, run cold, took 30 ms).
  for (let i = 0; i < COLS; i++) weights[i] = ((i * 7919) % 1024) / 1024 - 0.5;
  for (let filled = COLS; filled < weights.length; filled *= 2)
    weights.copyWithin(filled, 0, filled);
  for (let j = 0; j < COLS; j++) x[j] = 1 / (j + 1);
  const pass = () => {
    for (let r = 0; r < ROWS; r++) {
      let sum = 0;
      const row = r * COLS;
      for (let j = 0; j < COLS; j++) sum += weights[row + j]! * x[j]!;
      y[r] = sum;
    }
  };
  let best = 0;
  let passes = 0;
  let runs = 0;
  const start = now();
  while (passes < MAX_PASSES) {
    const before = now();
    let inRun = 0;
    let after = before;
    while (after - before < RUN_MS && passes < MAX_PASSES) {
      pass();
      inRun++;
      passes++;
      after = now();
    }
    runs++;
    if (after > before)
      best = Math.max(best, (weights.byteLength * inRun) / ((after - before) / 1000));
    if (runs >= MIN_RUNS && after - start >= budgetMs) break;
  }
  // Read the results, so the products cannot be left out as unused.
  if (Number.isNaN(y[0])) throw new Error('The CPU probe computed NaN.');
  return { bytesPerSecond: Math.round(best), passes };
}

/** A kept probe is run again after a week, on a host start then. */
export const PROBE_MAX_AGE_MS = 7 * 24 * 3600 * 1000;

/** What is kept of a probe: the figure, and the device it was measured on. */
export interface StoredProbe {
  /** The browser and the processor it ran on: a new browser or another core count runs it again. */
  device: string;
  bytes_per_second: number;
  measured_at: number;
}

/** Where the probe is kept (the engine worker's database; a map in tests). */
export interface ProbeStore {
  get(): Promise<StoredProbe | undefined>;
  put(probe: StoredProbe): Promise<void>;
}

/** What `measureCpu` reads of the platform. */
export interface CpuPlatform extends LlamaPlatform {
  userAgent: string;
  /** `navigator.deviceMemory`, where the browser has it. */
  deviceMemory?: number;
}

/** This worker's platform: its isolation, cores, browser and memory. */
export function cpuPlatform(base: LlamaPlatform): CpuPlatform {
  const nav = globalThis.navigator as (Navigator & { deviceMemory?: number }) | undefined;
  return {
    ...base,
    userAgent: nav?.userAgent ?? '',
    ...(typeof nav?.deviceMemory === 'number' && { deviceMemory: nav.deviceMemory }),
  };
}

/** The key a probe is kept under: what, when it changes, makes the figure stale. */
export function probeDevice(platform: Pick<CpuPlatform, 'userAgent' | 'cores'>): string {
  return `${platform.userAgent} | ${platform.cores} cores`;
}

/**
 * The CPU facts: the probe kept for this device, or a new one (kept for next time) where none
 * is kept, the browser or the core count changed, or the kept one is a week old. A store that
 * fails to read or write costs a probe, never the facts.
 */
export async function measureCpu(
  platform: CpuPlatform,
  store: ProbeStore,
  probe: () => ProbeResult = () => probeMatvec(),
  now: () => number = Date.now,
): Promise<CpuFacts> {
  const device = probeDevice(platform);
  let kept = await store.get().catch(() => undefined);
  const same = kept?.device === device && kept.bytes_per_second > 0;
  if (!kept || !same || now() - kept.measured_at > PROBE_MAX_AGE_MS) {
    const measured = probe().bytesPerSecond;
    // Measured again on the same device, the faster figure stands: other work on the processor
    // only ever slows the probe, and the first one ran while the page was starting.
    const best = same && kept ? Math.max(measured, kept.bytes_per_second) : measured;
    kept = { device, bytes_per_second: best, measured_at: now() };
    await store.put(kept).catch(() => undefined);
  }
  return {
    cores: platform.cores,
    threads: llamaThreads(platform.isolated, platform.cores),
    isolated: platform.isolated,
    bytes_per_second: kept.bytes_per_second,
    memory_gb: platform.deviceMemory ?? null,
    measured_at: kept.measured_at,
  };
}
