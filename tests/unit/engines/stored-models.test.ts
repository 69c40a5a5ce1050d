import { describe, expect, it } from 'vitest';
import { SerialReads, storedIds } from '../../../src/engines/stored-models';

describe('SerialReads', () => {
  it('runs each read after the ones asked for before it, so the newest answer is the one kept', async () => {
    const order: string[] = [];
    let kept = '';
    // The first read is the slowest: run at once, it would finish last and overwrite the others.
    const delays = [30, 10, 0];
    let n = 0;
    const reads = new SerialReads(async () => {
      const mine = n++;
      order.push(`start ${mine}`);
      await new Promise((resolve) => setTimeout(resolve, delays[mine]));
      order.push(`end ${mine}`);
      kept = `read ${mine}`;
    });
    void reads.refresh();
    void reads.refresh();
    await reads.refresh();
    expect(order).toEqual(['start 0', 'end 0', 'start 1', 'end 1', 'start 2', 'end 2']);
    expect(kept).toBe('read 2');
  });

  it('goes on reading after a read that failed, and settled() does not reject', async () => {
    let n = 0;
    const reads = new SerialReads(async () => {
      n += 1;
      if (n === 1) throw new Error('the cache went away');
    });
    await expect(reads.refresh()).rejects.toThrow('the cache went away');
    await expect(reads.settled()).resolves.toBeUndefined();
    await reads.refresh();
    expect(n).toBe(2);
  });
});

describe('storedIds', () => {
  it('asks of every entry at once and keeps the catalogue order, a failed lookup counting as absent', async () => {
    const asked: string[] = [];
    let running = 0;
    let most = 0;
    const ids = await storedIds([{ id: 'a' }, { id: 'b' }, { id: 'c' }], async ({ id }) => {
      asked.push(id);
      running += 1;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, id === 'a' ? 20 : 0));
      running -= 1;
      if (id === 'b') throw new Error('unreadable');
      return true;
    });
    expect(ids).toEqual(['a', 'c']);
    expect(most).toBe(3);
  });
});
