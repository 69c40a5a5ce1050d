import { describe, expect, it } from 'vitest';
import { Channel } from '../../../src/bridge/channel';

describe('Channel', () => {
  it('hands items to a waiting reader and buffers them for a late one', async () => {
    const channel = new Channel<number>();
    const waiting = channel.next();
    channel.push(1);
    channel.push(2);
    channel.push(3);
    expect(await waiting).toEqual({ done: false, value: 1 });
    expect(channel.size).toBe(2);
    channel.close();
    const rest: number[] = [];
    for await (const n of channel) rest.push(n);
    expect(rest).toEqual([2, 3]);
  });

  it('delivers what is buffered before failing', async () => {
    const channel = new Channel<string>();
    channel.push('a');
    channel.fail(new Error('boom'));
    expect(await channel.next()).toEqual({ done: false, value: 'a' });
    await expect(channel.next()).rejects.toThrow('boom');
  });

  it('fails a reader that is already waiting', async () => {
    const channel = new Channel<string>();
    const waiting = channel.next();
    channel.fail(new Error('gone'));
    await expect(waiting).rejects.toThrow('gone');
  });

  it('ignores pushes after it ended', async () => {
    const channel = new Channel<number>();
    channel.close();
    channel.push(1);
    expect(await channel.next()).toEqual({ done: true, value: undefined });
  });

  it('tells its owner when the reader stops early, and only then', async () => {
    let returned = 0;
    const early = new Channel<number>(() => (returned += 1));
    early.push(1);
    early.push(2);
    for await (const n of early) {
      expect(n).toBe(1);
      break;
    }
    expect(returned).toBe(1);
    expect(early.size).toBe(0);

    const finished = new Channel<number>(() => (returned += 1));
    finished.push(1);
    finished.close();
    for await (const n of finished) expect(n).toBe(1);
    expect(returned).toBe(1);
  });

  it('keeps a long backlog in order', async () => {
    const channel = new Channel<number>();
    for (let i = 0; i < 100_000; i += 1) channel.push(i);
    channel.close();
    let expected = 0;
    for await (const n of channel) {
      expect(n).toBe(expected);
      expected += 1;
    }
    expect(expected).toBe(100_000);
  });

  it('tells its watcher of every item taken, handed over or read from the buffer', async () => {
    const taken: number[] = [];
    const channel = new Channel<number>(undefined, { onTake: (n) => taken.push(n) });
    const waiting = channel.next();
    channel.push(1); // to the reader already waiting
    channel.push(2);
    channel.push(3);
    expect(taken).toEqual([1]);
    expect(await waiting).toEqual({ done: false, value: 1 });
    await channel.next();
    expect(taken).toEqual([1, 2]);
  });

  it('tells its watcher what it throws away, on return and on discard', async () => {
    const dropped: number[][] = [];
    const returned = new Channel<number>(undefined, {
      onDrop: (items) => dropped.push([...items]),
    });
    returned.push(1);
    returned.push(2);
    await returned.next();
    await returned.return();
    const discarded = new Channel<number>(undefined, {
      onDrop: (items) => dropped.push([...items]),
    });
    discarded.push(3);
    discarded.discard(new Error('too slow'));
    expect(dropped).toEqual([[2], [3]]);
    await expect(discarded.next()).rejects.toThrow('too slow');
  });

  it('discards what a finished channel still holds, ending it with the error instead', async () => {
    const channel = new Channel<number>();
    channel.push(1);
    channel.close();
    channel.discard(new Error('crowded out'));
    await expect(channel.next()).rejects.toThrow('crowded out');
    const read = new Channel<number>();
    read.close();
    read.discard(new Error('late'));
    expect(await read.next()).toEqual({ done: true, value: undefined });
  });

  it('lets a producer wait until the reader has made room, or the channel ends', async () => {
    const channel = new Channel<number>();
    for (let i = 0; i < 4; i += 1) channel.push(i);
    let room = false;
    const wait = channel.whenBelow(3).then(() => (room = true));
    await channel.next();
    await Promise.resolve();
    expect(room).toBe(false); // 3 left
    await channel.next();
    await wait;
    expect(room).toBe(true);
    const ending = new Channel<number>();
    ending.push(1);
    const ended = ending.whenBelow(1);
    ending.close();
    await ended;
  });
});
