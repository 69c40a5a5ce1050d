import { describe, expect, it } from 'vitest';
import { OpenAIError } from '../../../src/protocol/errors';
import type { GpuFacts } from '../../../src/protocol/host/gpu-facts';
import { hostDevice } from '../../../sw/device';

const gpu: GpuFacts = { webgpu: true, adapter: null };

/** A host link with `hostId` attached (none: no tab hosts the engine), counting status calls. */
function link(device: GpuFacts | null = gpu) {
  const state = { hostId: 'a' as string | undefined, asked: 0, device };
  const facts = hostDevice({
    port: async () => {
      if (!state.hostId) throw new OpenAIError('engine_unavailable', 'No tab hosts the engine.');
    },
    hostId: () => state.hostId,
    status: async () => {
      state.asked += 1;
      return { host: { id: state.hostId!, build: 'b' }, device: state.device };
    },
  });
  return { state, facts };
}

describe('hostDevice', () => {
  it('asks a host for its facts once, as they do not change while it lives', async () => {
    const { state, facts } = link();
    expect(await facts()).toEqual(gpu);
    expect(await facts()).toEqual(gpu);
    expect(state.asked).toBe(1);
  });

  it('asks again when another host takes over', async () => {
    const { state, facts } = link();
    await facts();
    state.hostId = 'b';
    await facts();
    expect(state.asked).toBe(2);
  });

  it('gives null while the host has not measured, and asks again next time', async () => {
    const { state, facts } = link(null);
    expect(await facts()).toBeNull();
    state.device = gpu;
    expect(await facts()).toEqual(gpu);
  });

  it('fails as a request would when no tab hosts the engine', async () => {
    const { state, facts } = link();
    state.hostId = undefined;
    await expect(facts()).rejects.toMatchObject({ code: 'engine_unavailable', status: 503 });
  });
});
