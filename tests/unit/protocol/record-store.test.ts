import { describe, expect, it } from 'vitest';
import { memoryStore } from '../../../src/protocol/record-store';

interface Item {
  name: string;
  tags: string[];
}

describe('memoryStore', () => {
  it('keeps one record per key: a put with a known key replaces it, and delete removes it', async () => {
    const store = memoryStore<Item>((item) => item.name, [{ name: 'a', tags: [] }]);
    await store.put({ name: 'b', tags: ['x'] });
    await store.put({ name: 'a', tags: ['y'] });
    expect(await store.list()).toEqual([
      { name: 'a', tags: ['y'] },
      { name: 'b', tags: ['x'] },
    ]);
    await store.delete('a');
    await store.delete('no such key');
    expect(await store.list()).toEqual([{ name: 'b', tags: ['x'] }]);
  });

  it('hands out copies, as IndexedDB does: changing a record put or listed changes nothing stored', async () => {
    const initial = { name: 'a', tags: ['one'] };
    const store = memoryStore<Item>((item) => item.name, [initial]);
    initial.tags.push('changed before');
    const put = { name: 'b', tags: ['two'] };
    await store.put(put);
    put.tags.push('changed after');
    const [listed] = await store.list();
    listed!.tags.push('changed listed');
    expect(await store.list()).toEqual([
      { name: 'a', tags: ['one'] },
      { name: 'b', tags: ['two'] },
    ]);
  });
});
