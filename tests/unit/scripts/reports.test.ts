import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { failureLines, testRuns } from '../../../scripts/suite/reports.mjs';

/** A report as Playwright's JSON reporter writes it: a file's suite, a `describe` inside it. */
const report = {
  stats: { duration: 9000, expected: 1, unexpected: 2, skipped: 1, flaky: 0 },
  errors: [],
  suites: [
    {
      title: 'faults.spec.ts',
      file: 'faults.spec.ts',
      specs: [
        {
          title: 'answers a request',
          file: 'faults.spec.ts',
          tests: [{ projectName: 'root', results: [{ duration: 1200, status: 'passed' }] }],
        },
        {
          title: 'is skipped in Firefox',
          file: 'faults.spec.ts',
          tests: [{ projectName: 'firefox', results: [{ duration: 0, status: 'skipped' }] }],
        },
      ],
      suites: [
        {
          title: 'a closed tab',
          file: 'faults.spec.ts',
          specs: [
            {
              title: 'frees its queue place',
              file: 'faults.spec.ts',
              tests: [
                {
                  projectName: 'root',
                  results: [
                    {
                      duration: 60000,
                      status: 'timedOut',
                      error: { message: '\u001b[31mTest timeout of 60000ms exceeded.\u001b[39m' },
                    },
                  ],
                },
              ],
            },
            {
              title: 'keeps the reply',
              file: 'faults.spec.ts',
              tests: [
                {
                  projectName: 'firefox',
                  results: [
                    {
                      duration: 300,
                      status: 'failed',
                      error: {
                        message:
                          'expect(received).toBe(expected)\n\nExpected: 1\nReceived: 2\n\n  at a.ts:1\n  at b.ts:2',
                      },
                    },
                  ],
                },
              ],
            },
          ],
        },
      ],
    },
  ],
};

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

  it('name an error outside any test, such as a global setup that threw', () => {
    const file = written({ ...report, suites: [], errors: [{ message: 'Error: build failed' }] });
    expect(failureLines([file])).toEqual([
      `  ${file}: outside any test`,
      '      Error: build failed',
    ]);
  });

  it('name a test that passed only when retried as flaky, and list both tries of a test that failed at each', () => {
    const retried = {
      ...report,
      suites: [
        {
          title: 'hosts.spec.ts',
          file: 'hosts.spec.ts',
          specs: [
            {
              title: 'a closed host',
              file: 'hosts.spec.ts',
              tests: [
                {
                  projectName: 'firefox',
                  results: [
                    {
                      duration: 900,
                      status: 'failed',
                      retry: 0,
                      error: { message: 'Error: gone' },
                    },
                    { duration: 800, status: 'passed', retry: 1 },
                  ],
                },
              ],
            },
            {
              title: 'a frozen host',
              file: 'hosts.spec.ts',
              tests: [
                {
                  projectName: 'root',
                  results: [
                    { duration: 900, status: 'failed', retry: 0, error: { message: 'Error: one' } },
                    {
                      duration: 60000,
                      status: 'timedOut',
                      retry: 1,
                      error: { message: 'Error: two' },
                    },
                  ],
                },
              ],
            },
          ],
        },
      ],
    };
    expect(failureLines([written(retried)])).toEqual([
      '  firefox hosts.spec.ts › a closed host (failed; passed when retried: flaky)',
      '      Error: gone',
      '  root hosts.spec.ts › a frozen host (failed)',
      '      Error: one',
      '  root hosts.spec.ts › a frozen host (retry 1: timedOut)',
      '      Error: two',
    ]);
  });

  it('give no lines when every test passed', () => {
    const passing = { ...report, suites: [{ ...report.suites[0], suites: [] }] };
    expect(failureLines([written(passing)])).toEqual([]);
  });
});
