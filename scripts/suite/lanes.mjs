// Runs the suites in lanes side by side (`npm test`, `npm run test:e2e`). A lane is a list of
// steps run one after another; the lanes run at once. Playwright's lines are passed through as
// they come (each names its project); the other steps' output is held and printed in one block
// when the step ends, so that it reads whole. At the end a table gives each step's verdict and
// time, and the exit status is 1 if any step failed. Why lanes: docs/development.md#suite-time.
import { spawn } from 'node:child_process';

/**
 * @typedef {object} Step
 * @property {string} name what the table calls it
 * @property {string[]} command the program and its arguments
 * @property {Record<string, string>} [env] added to this process's environment
 * @property {boolean} [stream] pass its output through line by line (Playwright's list reporter)
 */

/** The ports of a lane's browser suites: its app, model server and sites (playwright.config.ts). */
function e2ePorts(/** @type {number} */ port) {
  return {
    E2E_PORT: String(port),
    E2E_MODEL_PORT: String(port + 9),
    E2E_SITE_PORT: String(port + 14),
  };
}

/**
 * The browser suites: Chromium's main project in one lane; Firefox's in the other, with Chromium's
 * `no-webgpu`, `subpath` and `isolation` (a lane launches whichever browsers its projects name),
 * which evens out the lanes: the Firefox lane runs the checks first, the other makes the fixture
 * sites.
 */
export const CHROMIUM_LANE = { projects: ['root'], port: 4179 };
export const FIREFOX_LANE = {
  projects: ['firefox', 'firefox-no-jspi', 'no-webgpu', 'subpath', 'isolation'],
  port: 4279,
};
export const BROWSER_LANES = [CHROMIUM_LANE, FIREFOX_LANE];

/**
 * The Playwright step of a browser lane: its projects, on its ports; `rest` are more arguments.
 * @param {{ projects: string[], port: number }} lane
 * @param {string[]} rest
 * @returns {Step}
 */
export function playwrightStep(lane, rest = []) {
  return {
    name: `browser suites: ${lane.projects.join(', ')}`,
    command: ['npx', 'playwright', 'test', ...lane.projects.map((p) => `--project=${p}`), ...rest],
    env: {
      ...e2ePorts(lane.port),
      // The app built for a sub-path is served only to the lane that tests it.
      E2E_SUBPATH: lane.projects.includes('subpath') ? '1' : '0',
    },
    stream: true,
  };
}

/**
 * Runs one step; resolves with whether it passed and how long it took.
 * @param {Step} step
 * @returns {Promise<{ ok: boolean, seconds: number }>}
 */
function runStep(step) {
  const started = performance.now();
  const [program, ...args] = step.command;
  const child = spawn(/** @type {string} */ (program), args, {
    env: { ...process.env, ...step.env, FORCE_COLOR: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  /** @type {string[]} */
  const held = [];
  for (const stream of [child.stdout, child.stderr]) {
    let partial = '';
    stream.setEncoding('utf8');
    stream.on('data', (/** @type {string} */ chunk) => {
      if (!step.stream) return void held.push(chunk);
      // Whole lines only: two lanes' lines interleave but never cut into each other.
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) process.stdout.write(`${line}\n`);
    });
    stream.on('end', () => {
      if (partial) process.stdout.write(`${partial}\n`);
    });
  }
  return new Promise((resolve) => {
    // A program that could not start fails its step (`close` follows with no exit code).
    child.on('error', (error) => console.error(`${step.command.join(' ')}: ${error.message}`));
    child.on('close', (code) => {
      if (!step.stream) process.stdout.write(`\n── ${step.name} ──\n${held.join('')}\n`);
      resolve({ ok: code === 0, seconds: (performance.now() - started) / 1000 });
    });
  });
}

/**
 * Runs the lanes side by side (or one after another with `serial`), each step of a lane after
 * the last, and exits with 1 if any step failed (a lane goes on after a failed step).
 * @param {Step[][]} lanes
 * @param {{ serial?: boolean }} [options]
 */
export async function runLanes(lanes, { serial = false } = {}) {
  const started = performance.now();
  /** @type {{ step: Step, ok: boolean, seconds: number }[]} */
  const results = [];
  const runLane = async (/** @type {Step[]} */ lane) => {
    for (const step of lane) results.push({ step, ...(await runStep(step)) });
  };
  if (serial) for (const lane of lanes) await runLane(lane);
  else await Promise.all(lanes.map(runLane));
  const total = (performance.now() - started) / 1000;
  console.log('\n| step | result | time |\n| --- | --- | --- |');
  for (const { step, ok, seconds } of results) {
    console.log(`| ${step.name} | ${ok ? 'passed' : 'FAILED'} | ${minutes(seconds)} |`);
  }
  console.log(`| all (${serial ? 'one after another' : 'side by side'}) | | ${minutes(total)} |`);
  process.exit(results.every(({ ok }) => ok) ? 0 : 1);
}

/** `m:ss` */
function minutes(/** @type {number} */ seconds) {
  const whole = Math.round(seconds);
  return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, '0')}`;
}
