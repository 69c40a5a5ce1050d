import { describe, expect, it } from 'vitest';
import type { GpuFacts } from '../../../src/protocol/host/gpu-facts';
import { hearthStatus, type HostStatus } from '../../../src/protocol/host/status';

const limits = {
  maxBufferSize: 1 << 30,
  maxStorageBufferBindingSize: 1 << 30,
  maxComputeWorkgroupStorageSize: 32 << 10,
  maxStorageBuffersPerShaderStage: 10,
  maxComputeInvocationsPerWorkgroup: 256,
};
const swiftshader: GpuFacts = {
  webgpu: true,
  adapter: {
    vendor: 'google',
    architecture: 'swiftshader',
    fallback: true,
    features: ['subgroups'],
    limits,
  },
};
const storage = { usage_bytes: 1, quota_bytes: 2, persisted: false };

function host(device: GpuFacts | null): HostStatus {
  return {
    host: { id: 'h', build: 'b' },
    models: ['hearth/echo'],
    loaded_model: null,
    loading: null,
    load_error: null,
    failing_models: {},
    last_speed: null,
    downloads: [],
    evicted_models: {},
    queue: { running: 0, waiting: 0 },
    open_ports: 0,
    device,
  };
}

describe('hearthStatus', () => {
  it('shows the adapter the host measured as webgpu, with the limits WebLLM checks', () => {
    const status = hearthStatus(host(swiftshader), storage);
    expect(status.webgpu).toEqual({
      available: true,
      adapter: { vendor: 'google', architecture: 'swiftshader', fallback: true },
      features: ['subgroups'],
      limits,
    });
    expect(status).toMatchObject({ host: { id: 'h' }, storage, queue: { running: 0 } });
    expect(status).not.toHaveProperty('device');
  });

  it('says the adapter is not known yet while the host has not measured it, not that there is none', () => {
    expect(hearthStatus(host(null), storage).webgpu).toEqual({
      available: null,
      adapter: null,
      features: [],
      limits: null,
      reason: expect.stringMatching(/not known yet/i),
    });
  });

  it('tells a browser without WebGPU from WebGPU without an adapter', () => {
    expect(hearthStatus(host({ webgpu: false, adapter: null }), storage).webgpu).toMatchObject({
      available: false,
      reason: expect.stringMatching(/no WebGPU/),
    });
    expect(hearthStatus(host({ webgpu: true, adapter: null }), storage).webgpu).toMatchObject({
      available: false,
      reason: expect.stringMatching(/no usable GPU adapter/),
    });
  });
});
