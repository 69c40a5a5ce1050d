// The JSON reports Playwright writes (playwright.config.ts: test-results/report-<port>-<n>.json),
// read by `npm run suite-times` (where the time went) and by the lanes at the end of a run (which
// tests failed: CI shows only the end of a run's output, where Playwright's own lines on a
// failure may lie thousands of lines above).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { stripVTControlCharacters } from 'node:util';

/**
 * One result of one test in one project (a retried test has several).
 * @typedef {object} TestRun
 * @property {string} project
 * @property {string} file
 * @property {string} title the test's title, after those of the `describe` blocks around it
 * @property {number} ms
 * @property {string} status `passed`, `failed`, `timedOut`, `interrupted` or `skipped`
 * @property {number} retry 0 for the first try, 1 for the retry (playwright.config.ts: `retries`)
 * @property {string} [error] the first error's message
 */

/** @typedef {{ duration: number, status: string, retry?: number, error?: { message?: string } }} Result */
/** @typedef {{ projectName: string, results: Result[] }} Test */
/** @typedef {{ title: string, file: string, tests: Test[] }} Spec */
/** @typedef {{ title: string, file: string, specs?: Spec[], suites?: Suite[] }} Suite */
/**
 * @typedef {object} Report
 * @property {Suite[]} suites
 * @property {{ duration: number, expected: number, unexpected: number, skipped: number, flaky: number }} stats
 * @property {{ message?: string }[]} [errors] errors outside tests (global setup, a web server)
 */

/** The reports in test-results/, by name (`npm test`'s lanes delete those of earlier runs). */
export function reportFiles() {
  if (!existsSync('test-results')) return [];
  return readdirSync('test-results')
    .filter((name) => /^report-.*\.json$/.test(name))
    .map((name) => `test-results/${name}`);
}

/** @returns {Report} */
export function readReport(/** @type {string} */ file) {
  return JSON.parse(readFileSync(file, 'utf8'));
}

/**
 * Every result in `report`, titled by its `describe` blocks and its own title.
 * @param {Report} report
 * @returns {TestRun[]}
 */
export function testRuns(report) {
  /** @type {TestRun[]} */
  const runs = [];
  const walk = (/** @type {Suite} */ suite, /** @type {string[]} */ outer) => {
    for (const spec of suite.specs ?? []) {
      for (const test of spec.tests) {
        for (const result of test.results) {
          runs.push({
            project: test.projectName,
            file: spec.file,
            title: [...outer, spec.title].join(' › '),
            ms: result.duration,
            status: result.status,
            retry: result.retry ?? 0,
            ...(result.error?.message && { error: result.error.message }),
          });
        }
      }
    }
    // The file's own suite is titled by its file name, which a run names already.
    for (const child of suite.suites ?? []) walk(child, [...outer, child.title]);
  };
  for (const suite of report.suites) walk(suite, []);
  return runs;
}

/** Whether a result is a failure: one that failed, ran out of time or was cut off. */
const failed = (/** @type {TestRun} */ run) => run.status !== 'passed' && run.status !== 'skipped';

/**
 * The failures in `files`' reports, a few lines each (the test, how its try ended and whether its
 * retry passed, then the head of its error), and the errors outside tests; none when every test
 * passed at its first try. A test that passed only when retried is listed too: it is flaky.
 * @param {string[]} files
 * @returns {string[]}
 */
export function failureLines(files) {
  /** @type {string[]} */
  const lines = [];
  const head = (/** @type {string} */ message) =>
    stripVTControlCharacters(message)
      .split('\n')
      .filter((line) => line.trim())
      .slice(0, 4)
      .map((line) => `      ${line.trim().slice(0, 160)}`);
  for (const file of files) {
    const report = readReport(file);
    const runs = testRuns(report);
    const name = (/** @type {TestRun} */ run) => `${run.project} ${run.file} › ${run.title}`;
    const passed = new Set(runs.filter((run) => run.status === 'passed').map(name));
    for (const run of runs.filter(failed)) {
      const retried = passed.has(name(run)) ? '; passed when retried: flaky' : '';
      const attempt = run.retry ? `retry ${run.retry}: ` : '';
      lines.push(`  ${name(run)} (${attempt}${run.status}${retried})`);
      if (run.error) lines.push(...head(run.error));
    }
    for (const error of report.errors ?? []) {
      lines.push(`  ${file}: outside any test`, ...head(error.message ?? ''));
    }
  }
  return lines;
}
