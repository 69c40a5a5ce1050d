import { describe, expect, it } from 'vitest';
import { catalogModel } from '../catalog-model';
import { describeDownloadFailure } from '../../../../../src/app/models/downloads/download-failure';

const model = catalogModel;

const qwen = model('mlc-ai/Qwen3-0.6B-q4f32_1-MLC');

describe('describeDownloadFailure', () => {
  it("says by the model's name that the host cannot be reached when the engine host could not reach it", () => {
    const failure = describeDownloadFailure(qwen, {
      code: 'download_unreachable',
      message:
        'Downloading mlc-ai/Qwen3-0.6B-q4f32_1-MLC failed: could not reach huggingface.co (Failed to fetch): the device may be offline, or the server down',
    });
    expect(failure).toEqual({
      text: "Qwen3 0.6B could not be downloaded: the model host (huggingface.co) can't be reached — are you offline?",
      unreachable: true,
    });
    expect(failure.text).not.toContain('mlc-ai/');
    expect(failure.text).not.toContain('Failed to fetch');
  });

  it.each([
    ['Chromium', 'TypeError: Failed to fetch'],
    ['Firefox', 'NetworkError when attempting to fetch resource.'],
    ['Safari', 'Load failed'],
    [
      'the engine host, when the browser knows it is offline',
      'The device is offline: connect to the network to download mlc-ai/Qwen3-0.6B-q4f32_1-MLC.',
    ],
  ])('takes the network failure of %s for an unreachable host', (_, message) => {
    const failure = describeDownloadFailure(qwen, { code: null, message });
    expect(failure.unreachable).toBe(true);
    expect(failure.text).toBe(
      "Qwen3 0.6B could not be downloaded: the model host can't be reached — are you offline?",
    );
  });

  it('takes the codes of a host that did not answer for an unreachable host, whatever the message', () => {
    for (const code of ['download_unreachable', 'upstream_unavailable', 'upstream_timeout']) {
      expect(describeDownloadFailure(qwen, { code, message: 'No answer.' }).unreachable).toBe(true);
    }
  });

  it('says a full disk as a full disk, by the name of a GGUF model', () => {
    const gguf = model('bartowski/Qwen2.5-0.5B-Instruct-GGUF:Q4_K_M', { engine: 'llama.cpp' });
    const failure = describeDownloadFailure(gguf, {
      code: 'storage_full',
      message:
        "The device's storage is full: bartowski/Qwen2.5-0.5B-Instruct-GGUF:Q4_K_M could not be downloaded, and what it had stored was removed to free the space.",
    });
    expect(failure).toEqual({
      text: "Qwen2.5 0.5B Instruct does not fit: this device's storage is full. What it had stored was removed to free the space.",
      unreachable: false,
    });
  });

  it("passes other failures on after the model's name, without the id the engine host names it by", () => {
    const failure = describeDownloadFailure(qwen, {
      code: 'engine_error',
      message: 'Downloading mlc-ai/Qwen3-0.6B-q4f32_1-MLC failed: HTTP 404 for params_shard_0.bin',
    });
    expect(failure).toEqual({
      text: 'Qwen3 0.6B could not be downloaded: HTTP 404 for params_shard_0.bin.',
      unreachable: false,
    });
  });

  it('says no more than that the download failed when the error has no words', () => {
    expect(describeDownloadFailure(qwen, { message: '' })).toEqual({
      text: 'Qwen3 0.6B could not be downloaded.',
      unreachable: false,
    });
  });
});
