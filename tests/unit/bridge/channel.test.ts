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
});
