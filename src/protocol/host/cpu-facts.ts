/**
 * @module
 * What the engine worker measured of the device's processor and memory, for the fit of llama.cpp's
 * models on the CPU (src/models/fit.ts), and how `/v1/hearth/status` shows it as `cpu`. Measured
 * where the engines run, as the GPU facts are: the threads llama.cpp gets depend on that worker's
 * cross-origin isolation, and its speed on that worker's processor.
 */

/** The processor and memory, as the engine worker measured them. */
export interface CpuFacts {
  /** Logical processors (`navigator.hardwareConcurrency`). */
  cores: number;
  /** The threads llama.cpp runs with here (several only in a cross-origin-isolated page). */
  threads: number;
  /** Whether the engine worker is cross-origin isolated. */
  isolated: boolean;
  /**
   * Bytes of Float32 weights one thread multiplies per second, in a matrix-vector product over
   * 8 MB (src/engines/llama/cpu-probe.ts): the probe's best run, so another task's slice of the
   * processor counts as little as it can.
   */
  bytes_per_second: number;
  /** `navigator.deviceMemory` in GB (Chromium only; it says at most 8); null where absent. */
  memory_gb: number | null;
  /** When the probe ran (ms since 1970): it is kept per device, and run again when that changes. */
  measured_at: number;
}
