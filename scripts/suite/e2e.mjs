// `npm run test:e2e`: the browser suites, Chromium's and Firefox's projects in two Playwright
// runs side by side, each on ports of its own (scripts/suite/lanes.mjs). Arguments go to both runs
// (`--project=…` picks the runs that have that project); `--serial` runs them one after another.
import { browserRun, runLanes } from './lanes.mjs';

/** The projects of each lane. */
const LANES = [
  ['root', 'no-webgpu', 'isolation'],
  ['firefox', 'firefox-no-jspi', 'subpath'],
];

const args = process.argv.slice(2);
const serial = args.includes('--serial');
const given = args.filter((arg) => arg !== '--serial');
const asked = given.flatMap((arg, i) =>
  arg === '--project' ? [given[i + 1]] : arg.startsWith('--project=') ? [arg.slice(10)] : [],
);
const rest = given.filter((arg, i) => !arg.startsWith('--project') && given[i - 1] !== '--project');

const filtered = rest.some((arg) => !arg.startsWith('-'));
const lanes = LANES.map((projects) =>
  asked.length ? projects.filter((p) => asked.includes(p)) : projects,
)
  .filter((projects) => projects.length > 0)
  // A lane none of whose projects runs the files asked for has nothing to do, and that is fine.
  .map((projects) => [
    browserRun(projects, { args: filtered ? [...rest, '--pass-with-no-tests'] : rest }),
  ]);
await runLanes(lanes, { serial });
