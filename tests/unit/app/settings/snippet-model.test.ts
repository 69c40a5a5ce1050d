import { describe, expect, it } from 'vitest';
import { catalogModel } from '../models/catalog-model';
import { snippetModel } from '../../../../src/app/settings/snippet-model';

const model = catalogModel;

const echo = model('hearth/echo', { engine: 'echo', downloaded: true, loaded: true });
const qwen = model('mlc-ai/Qwen3-0.6B-q4f16_1-MLC', { required_features: ['shader-f16'] });
const smol = model('mlc-ai/SmolLM2-360M-Instruct-q4f32_1-MLC');

describe('the model the API snippets name', () => {
  it('names the open conversation’s model', () => {
    expect(snippetModel('mlc-ai/x', [echo, qwen])).toEqual({ id: 'mlc-ai/x', note: null });
    // Echo too, where the user picked it for the conversation: a developer's choice.
    expect(snippetModel('hearth/echo', [echo, qwen])).toEqual({ id: 'hearth/echo', note: null });
  });

  it('with no model chosen, names one on the device, the loaded one first, never echo', () => {
    const onDevice = { ...smol, downloaded: true };
    const loaded = { ...qwen, downloaded: true, loaded: true };
    expect(snippetModel('', [echo, onDevice])).toEqual({ id: onDevice.id, note: null });
    expect(snippetModel(undefined, [echo, onDevice, loaded])).toEqual({
      id: loaded.id,
      note: null,
    });
  });

  it('with nothing on the device, names the recommended model and says it must be downloaded first', () => {
    const named = snippetModel('', [echo, smol, qwen]);
    expect(named.id).toBe(qwen.id);
    expect(named.note).toBe(
      `No model is on this device yet: these snippets name ${qwen.id}, the one recommended here. Download it in Models before the first call.`,
    );
  });

  it('says so when no model is known at all, naming none', () => {
    expect(snippetModel('', [echo])).toEqual({
      id: 'MODEL_ID',
      note: 'No model is on this device yet, and none is known to run here: add one in Models, and put its id in place of MODEL_ID.',
    });
    // Before the list of models is read, nothing is known either way.
    expect(snippetModel('', [])).toEqual({
      id: 'MODEL_ID',
      note: 'Reading which models are on this device…',
    });
  });
});
