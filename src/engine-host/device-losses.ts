/**
 * @module
 * GPU device losses per model, kept in IndexedDB so that they outlive the host tab (a lost
 * device often takes the tab with it). One loss earns a reload; a second marks the model as
 * failing on this device, and every host refuses it from then on instead of crash-looping.
 */
import { engineDb } from './engine-db';

/** Losses that mark a model as failing. */
export const LOSSES_TO_FAIL = 2;

/** A model's record of lost devices. */
export interface LossRecord {
  losses: number;
  /** Unix ms of the last loss. */
  at: number;
  /** What the browser said. */
  detail: string;
}

/** The persisted device losses of this origin. */
export class DeviceLosses {
  /** Counts one more loss for `model`; resolves to the record as it now stands. */
  async record(model: string, detail: string): Promise<LossRecord> {
    const db = await engineDb();
    const before = await db.get('device-losses', model);
    const record = { model, losses: (before?.losses ?? 0) + 1, at: Date.now(), detail };
    await db.put('device-losses', record);
    return record;
  }

  /** The models marked as failing, with why. */
  async failing(): Promise<Record<string, string>> {
    const db = await engineDb();
    const failing: Record<string, string> = {};
    for (const record of await db.getAll('device-losses')) {
      if (record.losses >= LOSSES_TO_FAIL) {
        failing[record.model] =
          `The GPU device was lost ${record.losses} times running this model (last: ${record.detail}); it is marked as failing on this device.`;
      }
    }
    return failing;
  }

  /** Forgets the losses of `model` (it was deleted, or the user wants to try again). */
  async clear(model: string): Promise<void> {
    await (await engineDb()).delete('device-losses', model);
  }
}
