#!/usr/bin/env node
// Where the browser suite's time goes, from the JSON report every `playwright test` writes
// (playwright.config.ts: test-results/report-<port>.json): the run's wall time, the time inside
// tests by project and by file, and the slowest tests. What is left of the wall time is the
// suite's own overhead: builds, servers, browser starts, beforeAll/afterAll.
// `node scripts/suite/suite-times.mjs [report.json …] [--top N]`: by default the reports of the
// last `npm test`'s Playwright runs (test-results/report-<port>-<n>.json, scripts/suite/lanes.mjs),
// each in turn.
import { readReport, reportFiles, testRuns } from './reports.mjs';

const args = process.argv.slice(2);
const given = args.filter((a) => a.endsWith('.json'));
const files = given.length ? given : reportFiles();
const topAt = args.indexOf('--top');
const top = topAt >= 0 ? Number(args[topAt + 1]) : 15;

for (const file of files) {
  console.log(`\n${file}`);
  const report = readReport(file);
  const runs = testRuns(report);

  const minutes = (/** @type {number} */ ms) => `${(ms / 60_000).toFixed(1)} min`;
  /** @param {(run: typeof runs[number]) => string} key */
  const totals = (key) => {
    /** @type {Map<string, { ms: number, count: number }>} */
    const byKey = new Map();
    for (const run of runs) {
      const entry = byKey.get(key(run)) ?? { ms: 0, count: 0 };
      entry.ms += run.ms;
      entry.count += run.status === 'skipped' ? 0 : 1;
      byKey.set(key(run), entry);
    }
    return [...byKey].sort((a, b) => b[1].ms - a[1].ms);
  };

  const inTests = runs.reduce((sum, run) => sum + run.ms, 0);
  const { duration, expected, unexpected, skipped, flaky } = report.stats;
  console.log(
    `Run: ${minutes(duration)} wall; ${expected} passed, ${unexpected} failed, ${flaky} flaky, ${skipped} skipped`,
  );
  console.log(
    `Inside tests: ${minutes(inTests)}; outside them (builds, servers, browsers, beforeAll): ${minutes(duration - inTests)}`,
  );
  console.log('\nBy project');
  for (const [project, { ms, count }] of totals((r) => r.project)) {
    console.log(`  ${minutes(ms).padStart(10)}  ${String(count).padStart(4)} tests  ${project}`);
  }
  console.log('\nBy file and project');
  for (const [key, { ms, count }] of totals((r) => `${r.project} ${r.file}`)) {
    const mean = count ? (ms / count / 1000).toFixed(1) : '-';
    console.log(
      `  ${minutes(ms).padStart(10)}  ${String(count).padStart(4)} tests  ${mean.padStart(5)} s each  ${key}`,
    );
  }
  console.log(`\nSlowest ${top} tests`);
  for (const run of [...runs].sort((a, b) => b.ms - a.ms).slice(0, top)) {
    console.log(
      `  ${(run.ms / 1000).toFixed(1).padStart(6)} s  ${run.project} ${run.file} › ${run.title.slice(0, 90)}`,
    );
  }
}
