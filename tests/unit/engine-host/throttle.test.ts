import { describe, expect, it } from 'vitest';
import { Throttle } from '../../../src/engine-host/throttle';
import { sleep } from '../helpers';

describe('Throttle', () => {
  it('runs at once, then at most once per interval, and always after the last request', async () => {
    let runs = 0;
    const throttle = new Throttle(40, () => (runs += 1));
    throttle.request();
    await sleep(5);
    expect(runs).toBe(1);
    for (let i = 0; i < 10; i += 1) throttle.request();
    expect(runs).toBe(1);
    await sleep(60);
    expect(runs).toBe(2);
    await sleep(60);
    expect(runs).toBe(2);
  });
});

describe('Throttle with a settle time', () => {
  it('runs a burst once, at its end, rather than at its start', async () => {
    let runs = 0;
    const throttle = new Throttle(200, () => (runs += 1), 40);
    throttle.request();
    await sleep(10);
    expect(runs).toBe(0);
    throttle.request();
    await sleep(60);
    expect(runs).toBe(1);
    await sleep(250);
    expect(runs).toBe(1);
  });
});
