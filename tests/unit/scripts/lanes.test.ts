import { describe, expect, it } from 'vitest';
import { browserRun, cpuWork, playwrightArgs, schedule } from '../../../scripts/suite/lanes.mjs';

/**
 * `schedule` over named steps that end when the test says (`end`), so that which lane is free
 * first is the test's choice, not the machine's: `started` says which lane took each step.
 */
function lanesOf(lanes: string[][], tail: string[]) {
  const started: string[] = [];
  const ends = new Map<string, () => void>();
  const done = schedule(lanes, tail, (step, lane) => {
    started.push(`${step} in lane ${lane}`);
    return new Promise<void>((resolve) => ends.set(step, resolve));
  });
  /** Ends `step` and lets the lanes take their next steps. */
  const end = async (step: string) => {
    ends.get(step)!();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { started, end, done };
}

describe('the lanes of npm test', () => {
  it('run their own steps in order, and the lane free first takes the tail’s steps in order', async () => {
    const lanes = lanesOf([['a1', 'a2'], ['b1']], ['t1', 't2', 't3']);
    await lanes.end('b1');
    await lanes.end('t1');
    await lanes.end('a1');
    await lanes.end('t2');
    await lanes.end('t3');
    await lanes.end('a2');
    await lanes.done;
    expect(lanes.started).toEqual([
      'a1 in lane 0',
      'b1 in lane 1',
      't1 in lane 1',
      't2 in lane 1',
      'a2 in lane 0',
      't3 in lane 1',
    ]);
  });

  it('share the tail: each lane takes its next step once free, and every step runs once', async () => {
    const lanes = lanesOf([['a1'], ['b1']], ['t1', 't2', 't3']);
    await lanes.end('b1'); // lane 1 takes t1
    await lanes.end('a1'); // lane 0 takes t2
    await lanes.end('t2'); // lane 0 takes t3
    await lanes.end('t1'); // nothing is left for lane 1
    await lanes.end('t3');
    await lanes.done;
    expect(lanes.started).toEqual([
      'a1 in lane 0',
      'b1 in lane 1',
      't1 in lane 1',
      't2 in lane 0',
      't3 in lane 0',
    ]);
  });

  it('run one lane after the other when serial, the first taking the whole tail', async () => {
    const started: string[] = [];
    await schedule(
      [['a1'], ['b1']],
      ['t1'],
      async (step, lane) => void started.push(`${step} ${lane}`),
      true,
    );
    expect(started).toEqual(['a1 0', 't1 0', 'b1 1']);
  });
});

describe('a browser run', () => {
  const tail = [
    browserRun(['root'], { files: ['fuzz', 'a11y'] }),
    browserRun(['firefox'], { files: ['relay'] }),
    { name: 'unit tests', command: ['npx', 'vitest', 'run'] },
  ];

  it('of whole projects leaves out the files the tail’s runs of those projects take', () => {
    expect(playwrightArgs(browserRun(['root']), tail)).toEqual({
      args: ['--project=root'],
      leave: '/(fuzz|a11y)\\.spec\\.ts$',
    });
    expect(playwrightArgs(browserRun(['firefox', 'subpath']), tail)).toEqual({
      args: ['--project=firefox', '--project=subpath'],
      leave: '/(relay)\\.spec\\.ts$',
    });
    expect(playwrightArgs(browserRun(['no-webgpu']), tail)).toEqual({
      args: ['--project=no-webgpu'],
    });
  });

  it('of given files runs those files only, and leaves nothing out', () => {
    expect(playwrightArgs(tail[0] as ReturnType<typeof browserRun>, tail)).toEqual({
      args: ['--project=root', '/(fuzz|a11y)\\.spec\\.ts$'],
    });
  });

  it('names its files by their whole name: fuzz is not ui-fuzz or fuzz-more', () => {
    const { leave } = playwrightArgs(browserRun(['root']), tail);
    // As playwright.config.ts reads E2E_LEAVE, and as Playwright reads a filter that is not /…/.
    const pattern = new RegExp(leave!);
    expect(pattern.test('/repo/tests/e2e/fuzz.spec.ts')).toBe(true);
    expect(pattern.test('/repo/tests/e2e/a11y.spec.ts')).toBe(true);
    expect(pattern.test('/repo/tests/e2e/ui-fuzz.spec.ts')).toBe(false);
    expect(pattern.test('/repo/tests/e2e/fuzz-more.spec.ts')).toBe(false);
  });
});

describe('the CPU work of a run', () => {
  const cpu = (user: number, sys: number, idle: number) => ({
    model: 'test',
    speed: 1,
    times: { user, nice: 0, sys, idle, irq: 0 },
  });

  it('adds every core’s busy time and gives the share of the cores’ time it was', () => {
    const before = [cpu(1_000, 500, 9_000), cpu(2_000, 0, 3_000)];
    // Core 0: 7.5 s busy of 10; core 1: 10 s busy of 10.
    const after = [cpu(7_000, 2_000, 11_500), cpu(11_000, 1_000, 3_000)];
    expect(cpuWork(before, after)).toEqual({ cores: 2, busy: 0.875, cpuSeconds: 17.5 });
  });
});
