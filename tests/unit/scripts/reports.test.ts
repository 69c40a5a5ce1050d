import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { failureLines, testRuns } from '../../../scripts/suite/reports.mjs';

type Result = { duration: number; status: string; retry?: number; error?: { message: string } };

/** A test as Playwright's JSON reporter writes it: one spec, run in one project. */
const spec = (title: string, projectName: string, ...results: Result[]) => ({
  title,
  file: 'faults.spec.ts',
  tests: [{ projectName, results }],
});
const result = (status: string, message?: string, retry = 0): Result => ({
  duration: 100,
  status,
  retry,
  ...(message && { error: { message } }),
});
type Spec = ReturnType<typeof spec>;
/** A report of one file's suite with `specs`, and a `describe` block inside it with `inner`. */
const reportOf = (specs: Spec[], inner: Spec[] = []) => ({
  stats: { duration: 9000, expected: 1, unexpected: 2, skipped: 1, flaky: 0 },
  errors: [],
  suites: [
    {
      title: 'faults.spec.ts',
      file: 'faults.spec.ts',
      specs,
      suites: [{ title: 'a closed tab', file: 'faults.spec.ts', specs: inner }],
    },
  ],
});

const report = reportOf(
  [
    spec('answers a request', 'root', result('passed')),
    spec('is skipped in Firefox', 'firefox', result('skipped')),
  ],
  [
    spec(
      'frees its queue place',
      'root',
      result('timedOut', '\u001b[31mTest timeout of 60000ms exceeded.\u001b[39m'),
    ),
    spec(
      'keeps the reply',
      'firefox',
      result(
        'failed',
        'expect(received).toBe(expected)\n\nExpected: 1\nReceived: 2\n\n  at a.ts:1\n  at b.ts:2',
      ),
    ),
  ],
);

function written(content: object) {
  const file = join(mkdtempSync(join(tmpdir(), 'hearth-report-')), 'report-4179-1.json');
  writeFileSync(file, JSON.stringify(content));
  return file;
}

describe('the browser suites’ reports', () => {
  it('give every result with its project, file, describe blocks and status', () => {
    expect(testRuns(report).map((r) => `${r.project} ${r.file} › ${r.title}: ${r.status}`)).toEqual(
      [
        'root faults.spec.ts › answers a request: passed',
        'firefox faults.spec.ts › is skipped in Firefox: skipped',
        'root faults.spec.ts › a closed tab › frees its queue place: timedOut',
        'firefox faults.spec.ts › a closed tab › keeps the reply: failed',
      ],
    );
  });

  it('name each failed test and the head of its error, without colour codes, and nothing else', () => {
    expect(failureLines([written(report)])).toEqual([
      '  root faults.spec.ts › a closed tab › frees its queue place (timedOut)',
      '      Test timeout of 60000ms exceeded.',
      '  firefox faults.spec.ts › a closed tab › keeps the reply (failed)',
      '      expect(received).toBe(expected)',
      '      Expected: 1',
      '      Received: 2',
      '      at a.ts:1',
    ]);
  });

  it('name a test that passed only when retried as flaky, and list both tries of a test that failed at each', () => {
    const retried = reportOf([
      spec(
        'a closed host',
        'firefox',
        result('failed', 'Error: gone'),
        result('passed', undefined, 1),
      ),
      spec(
        'a frozen host',
        'root',
        result('failed', 'Error: one'),
        result('timedOut', 'Error: two', 1),
      ),
    ]);
    expect(failureLines([written(retried)])).toEqual([
      '  firefox faults.spec.ts › a closed host (failed; passed when retried: flaky)',
      '      Error: gone',
      '  root faults.spec.ts › a frozen host (failed)',
      '      Error: one',
      '  root faults.spec.ts › a frozen host (retry 1: timedOut)',
      '      Error: two',
    ]);
  });

  it('name an error outside any test, such as a global setup that threw', () => {
    const file = written({ ...reportOf([]), errors: [{ message: 'Error: build failed' }] });
    expect(failureLines([file])).toEqual([
      `  ${file}: outside any test`,
      '      Error: build failed',
    ]);
  });

  it('give no lines when every test passed', () => {
    const passing = reportOf([spec('answers a request', 'root', result('passed'))]);
    expect(failureLines([written(passing)])).toEqual([]);
  });
});
