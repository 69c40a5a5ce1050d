import { describe, expect, it, vi } from 'vitest';
import {
  measureCpu,
  PROBE_MAX_AGE_MS,
  probeDevice,
  probeMatvec,
  type CpuPlatform,
  type ProbeStore,
  type StoredProbe,
} from '../../../../src/engines/llama/cpu-probe';

/** The probe's matrix: 4,096 × 512 Float32 weights. */
const MATRIX_BYTES = 4096 * 512 * 4;

/** A clock that moves `step` ms each time it is read. */
function steppingClock(step: number): () => number {
  let t = 0;
  return () => (t += step);
}

describe('probeMatvec', () => {
  it('gives the bytes of weights a pass multiplies per second, from runs of at least 10 ms', () => {
    // Each pass reads the clock once more, 2 ms later: a run is 5 passes over 10 ms.
    const result = probeMatvec(steppingClock(2), 80);
    expect(result.bytesPerSecond).toBe((5 * MATRIX_BYTES) / 0.01);
    expect(result.passes % 5).toBe(0);
  });

  it('takes the best run, not the mean, so a slice taken by another task does not count', () => {
    let t = 0;
    let reads = 0;
    // The first run's passes take 10 ms each (a busy processor), the later ones 2 ms.
    const clock = () => (t += ++reads <= 3 ? 10 : 2);
    expect(probeMatvec(clock, 40).bytesPerSecond).toBe((5 * MATRIX_BYTES) / 0.01);
  });

  it('measures a real processor at a plausible speed: between 50 MB/s and 1 TB/s', () => {
    const { bytesPerSecond, passes } = probeMatvec(undefined, 30);
    expect(passes).toBeGreaterThanOrEqual(3);
    expect(bytesPerSecond).toBeGreaterThan(50e6);
    expect(bytesPerSecond).toBeLessThan(1e12);
  });
});

/** A platform of `cores`, isolated or not, in `userAgent`. */
function platform(fields: Partial<CpuPlatform> = {}): CpuPlatform {
  return { isolated: false, cores: 2, compat: false, userAgent: 'Browser/1', ...fields };
}

/** A store in memory, holding `kept`. */
function memoryStore(kept?: StoredProbe): ProbeStore & { kept?: StoredProbe } {
  const store: ProbeStore & { kept?: StoredProbe } = {
    get: async () => store.kept,
    put: async (probe) => {
      store.kept = probe;
    },
  };
  if (kept) store.kept = kept;
  return store;
}

describe('measureCpu', () => {
  it('probes once per device: a kept figure is used again, without probing', async () => {
    const store = memoryStore();
    const probe = vi.fn(() => ({ bytesPerSecond: 5e9, passes: 9 }));
    const first = await measureCpu(platform(), store, probe, () => 1000);
    const again = await measureCpu(platform(), store, probe, () => 2000);
    expect(probe).toHaveBeenCalledTimes(1);
    expect(first).toEqual({
      cores: 2,
      threads: 1,
      isolated: false,
      bytes_per_second: 5e9,
      memory_gb: null,
      measured_at: 1000,
    });
    expect(again).toEqual(first);
  });

  it('probes again when the browser or the core count changes', async () => {
    const store = memoryStore({
      device: probeDevice(platform()),
      bytes_per_second: 5e9,
      measured_at: 1,
    });
    const probe = vi.fn(() => ({ bytesPerSecond: 7e9, passes: 9 }));
    expect(
      (await measureCpu(platform({ userAgent: 'Browser/2' }), store, probe)).bytes_per_second,
    ).toBe(7e9);
    expect(
      (await measureCpu(platform({ userAgent: 'Browser/2', cores: 8 }), store, probe))
        .bytes_per_second,
    ).toBe(7e9);
    expect(probe).toHaveBeenCalledTimes(2);
    expect(store.kept?.device).toBe(probeDevice(platform({ userAgent: 'Browser/2', cores: 8 })));
  });

  it('probes again after a week, keeping the faster figure: other work only ever slows the probe', async () => {
    const store = memoryStore({
      device: probeDevice(platform()),
      bytes_per_second: 5e9,
      measured_at: 0,
    });
    const slower = vi.fn(() => ({ bytesPerSecond: 3e9, passes: 9 }));
    const weekLater = PROBE_MAX_AGE_MS + 1;
    expect((await measureCpu(platform(), store, slower, () => weekLater)).bytes_per_second).toBe(
      5e9,
    );
    expect(slower).toHaveBeenCalledTimes(1);
    expect(store.kept).toMatchObject({ bytes_per_second: 5e9, measured_at: weekLater });
    const faster = () => ({ bytesPerSecond: 6e9, passes: 9 });
    const later = 2 * weekLater;
    expect((await measureCpu(platform(), store, faster, () => later)).bytes_per_second).toBe(6e9);
  });

  it('gives llama.cpp’s threads by its rule and the device’s memory where the browser says it', async () => {
    const probe = () => ({ bytesPerSecond: 5e9, passes: 9 });
    const isolated = await measureCpu(
      platform({ isolated: true, cores: 16, deviceMemory: 8 }),
      memoryStore(),
      probe,
    );
    expect(isolated).toMatchObject({ cores: 16, threads: 4, isolated: true, memory_gb: 8 });
  });

  it('still measures when the store cannot be read or written', async () => {
    const broken: ProbeStore = {
      get: () => Promise.reject(new Error('no IndexedDB')),
      put: () => Promise.reject(new Error('no IndexedDB')),
    };
    const facts = await measureCpu(platform(), broken, () => ({ bytesPerSecond: 3e9, passes: 9 }));
    expect(facts.bytes_per_second).toBe(3e9);
  });
});
