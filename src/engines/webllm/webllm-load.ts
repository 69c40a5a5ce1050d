/**
 * @module
 * What a WebLLM model load reports, with no WebLLM import: the phase its progress text names
 * (`fetch`, `load`, `compile`: docs/models.md, Real models), the state the host's status shows, and
 * what a failed or cut-short load tells the client.
 */
import { OpenAIError } from '../../protocol/errors';
import type { LoadProgress } from '../engine';
import { outOfMemory } from './webllm-devices';
import { errorParts, fromWebLLMError } from './webllm-errors';

/** A model load in progress, for the host's status. */
export interface LoadState extends LoadProgress {
  model: string;
}

/** The phase of a load, from WebLLM's progress text (docs/models.md, Real models). */
export function loadPhase(text: string): string {
  if (text.startsWith('Fetching param cache')) return 'fetch';
  if (text.startsWith('Loading model from cache')) return 'load';
  if (text.startsWith('Loading GPU shader modules')) return 'compile';
  if (text.startsWith('Finish loading')) return 'done';
  return 'start';
}

/** WebLLM's progress report as a load's progress. */
export function progressOf(report: { text: string; progress: number }): LoadProgress {
  return { phase: loadPhase(report.text), progress: report.progress, text: report.text };
}

/**
 * Why `reload()` threw, as the API's error. `lostInLoad`: why the device was lost during the
 * load, if it was (the model did not fit).
 */
export function loadFailure(err: unknown, model: string, lostInLoad: string | null): OpenAIError {
  if (lostInLoad !== null) return outOfMemory(model, lostInLoad);
  const error = fromWebLLMError(err);
  if (error.code !== 'engine_error') return error;
  // Most often its files could not be fetched: say which model, and what went wrong.
  const { name, message } = errorParts(err);
  return new OpenAIError('engine_error', `Loading ${model} failed: ${name}: ${message}`);
}

/** A `reload()` that resolved without a model: WebLLM aborted it (it unloads on a lost device). */
export function loadCutShort(model: string, lostInLoad: string | null): OpenAIError {
  if (lostInLoad !== null) return outOfMemory(model, lostInLoad);
  return new OpenAIError('engine_error', `Loading ${model} was cut short; try again.`);
}
