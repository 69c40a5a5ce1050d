// Runs the suites in lanes side by side (`npm test`, `npm run test:e2e`). A lane is a list of
// steps run one after another, on ports of its own; the lanes run at once, and when a lane has
// run its own steps it takes the next step of a tail the lanes share, until none is left: the
// lane that is ahead on this machine does more of the tail, and the lanes end close together
// whichever of the browsers or the checks the machine is slower at. Playwright's lines are passed
// through as they come (each names its project); the other steps' output is held and printed in
// one block when the step ends, so that it reads whole. At the end a table gives each step's
// verdict, lane and time; then come the machine's CPU work during the run and the floor it sets,
// and the browser tests that failed or passed only when retried; the exit status is 1 if any step
// failed. Why lanes: docs/development.md#suite-time.
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { cpus } from 'node:os';
import { e2eServers } from './e2e-servers.mjs';
import { failureLines, reportFiles } from './reports.mjs';

/**
 * @typedef {object} Command
 * @property {string} name what the table calls it
 * @property {string[]} command the program and its arguments
 * @property {boolean} [stream] pass its output through line by line (Playwright's list reporter)
 */

/**
 * A run of the browser suites: its projects, and either only `files` of them or all but the
 * files the tail's runs of the same project take (`npm test` leaves no file out and runs none
 * twice). A lane gives it its ports and servers.
 * @typedef {object} BrowserRun
 * @property {string} name
 * @property {string[]} projects
 * @property {string[]} [files] the spec files' names, without `.spec.ts`
 * @property {string[]} [args] more arguments for Playwright
 */

/** @typedef {Command | BrowserRun} Step */

/** The ports of the lanes: each its app, model server and sites (e2e-servers.mjs). */
export const LANE_PORTS = [4179, 4279];

/**
 * A browser run of `projects` (all their files but those of the tail, or only `files`).
 * @param {string[]} projects
 * @param {{ files?: string[], args?: string[] }} [options]
 * @returns {BrowserRun}
 */
export function browserRun(projects, { files, args } = {}) {
  const name = `browser: ${projects.join(', ')}${files ? ` (${files.join(', ')})` : ''}`;
  return { name, projects, files, args };
}

/** A regular expression, as Playwright's filters and `E2E_LEAVE` take it, for spec files. */
function specFiles(/** @type {string[]} */ files) {
  return `/(${files.join('|')})\\.spec\\.ts$`;
}

/**
 * One lane's Playwright runs: each on the lane's ports, with the lane's servers (started before
 * its first run that needs them, stopped when the lanes end: a build and a preview server per
 * run would cost each run about 6 CPU-seconds), and a report of its own
 * (`test-results/report-<port>-<n>.json`).
 */
class Lane {
  runs = 0;
  /** @type {Map<string, import('node:child_process').ChildProcess>} url → its server */
  servers = new Map();

  /** @param {number} port */
  constructor(port) {
    this.port = port;
  }

  /** @param {boolean} subpath */
  env(subpath) {
    return {
      E2E_PORT: String(this.port),
      E2E_MODEL_PORT: String(this.port + 9),
      E2E_SITE_PORT: String(this.port + 14),
      // The app built for a sub-path is built and served only in the lanes that test it.
      E2E_SUBPATH: subpath ? '1' : '0',
    };
  }

  /**
   * The command and environment of `run` in this lane, once its servers are up.
   * @param {BrowserRun} run
   * @param {Step[]} tail
   */
  async prepare(run, tail) {
    const env = this.env(run.projects.includes('subpath'));
    await this.serve(env);
    const { args, leave } = playwrightArgs(run, tail);
    return {
      command: ['npx', 'playwright', 'test', ...args],
      env: {
        ...env,
        E2E_SERVERS_UP: '1',
        E2E_RUN: String(++this.runs),
        ...(leave && { E2E_LEAVE: leave }),
      },
    };
  }

  /** Starts the servers `env` asks for that are not up yet, and waits until they answer. */
  async serve(/** @type {Record<string, string>} */ env) {
    for (const server of e2eServers(env)) {
      if (this.servers.has(server.url)) continue;
      const [program, ...args] = server.command.split(' ');
      const child = spawn(/** @type {string} */ (program), args, {
        env: { ...process.env, ...server.env },
        stdio: ['ignore', 'ignore', 'inherit'],
        // Its own process group, so that its preview server goes with it (`stop`).
        detached: true,
      });
      this.servers.set(server.url, child);
      await answers(server.url, child);
    }
  }

  stop() {
    for (const child of this.servers.values()) {
      try {
        if (child.pid) process.kill(-child.pid);
      } catch {
        // Already gone.
      }
    }
    this.servers.clear();
  }
}

/**
 * Playwright's arguments for `run`, and the files it leaves out (`E2E_LEAVE`, which
 * playwright.config.ts reads): a run of given files runs those; any other leaves out the files
 * that the tail's runs of its projects take, so that no file is run twice or left out.
 * @param {BrowserRun} run
 * @param {Step[]} tail
 * @returns {{ args: string[], leave?: string }}
 */
export function playwrightArgs(run, tail) {
  const left = run.files
    ? []
    : tail.flatMap((other) =>
        'files' in other && other.files && other.projects.some((p) => run.projects.includes(p))
          ? other.files
          : [],
      );
  return {
    args: [
      ...run.projects.map((p) => `--project=${p}`),
      ...(run.files ? [specFiles(run.files)] : []),
      ...(run.args ?? []),
    ],
    ...(left.length && { leave: specFiles(left) }),
  };
}

/**
 * Runs each lane's own steps one after another, the lanes at once (or one lane after another
 * with `serial`); a lane that has run its own takes the tail's next step, until none is left.
 * @template S
 * @param {S[][]} lanes
 * @param {S[]} tail
 * @param {(step: S, lane: number) => Promise<void>} run `lane`: the lane's index
 * @param {boolean} [serial]
 */
export async function schedule(lanes, tail, run, serial = false) {
  const queue = [...tail];
  const runLane = async (/** @type {S[]} */ steps, /** @type {number} */ lane) => {
    const own = [...steps];
    for (let step = own.shift() ?? queue.shift(); step; step = own.shift() ?? queue.shift()) {
      await run(step, lane);
    }
  };
  if (serial) for (const [i, steps] of lanes.entries()) await runLane(steps, i);
  else await Promise.all(lanes.map(runLane));
}

/**
 * Resolves once `url` answers, or rejects when `server` exits first or two minutes pass (a build
 * on a loaded machine takes about 10 s).
 * @param {string} url
 * @param {import('node:child_process').ChildProcess} server
 */
async function answers(url, server) {
  const deadline = Date.now() + 120_000;
  let exited = false;
  server.once('exit', () => (exited = true));
  while (Date.now() < deadline && !exited) {
    const ok = await fetch(url).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`the server for ${url} ${exited ? 'exited' : 'did not answer in 2 minutes'}`);
}

/**
 * Runs one command; resolves with whether it passed.
 * @param {Command} step
 * @param {Record<string, string>} [env] added to this process's environment
 * @returns {Promise<boolean>}
 */
function runCommand(step, env = {}) {
  const [program, ...args] = step.command;
  const child = spawn(/** @type {string} */ (program), args, {
    env: { ...process.env, ...env, FORCE_COLOR: '0' },
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
      resolve(code === 0);
    });
  });
}

/**
 * Runs the lanes side by side (or one after another with `serial`), each its own steps one after
 * another and then the tail's next step while the tail has one, and exits with 1 if any step
 * failed (a lane goes on after a failed step).
 * @param {Step[][]} lanes a lane's own steps, each lane on the next of LANE_PORTS
 * @param {{ tail?: Step[], serial?: boolean }} [options] the tail: its longest steps first
 */
export async function runLanes(lanes, { tail = [], serial = false } = {}) {
  if (lanes.length > LANE_PORTS.length) throw new Error(`at most ${LANE_PORTS.length} lanes`);
  // The reports of earlier runs would read as this run's (suite-times.mjs reads them all).
  for (const file of reportFiles()) rmSync(file);
  const started = performance.now();
  const cpusAtStart = cpus();
  /** @type {{ step: Step, lane: number, ok: boolean, seconds: number }[]} */
  const results = [];
  const lanesOpen = LANE_PORTS.slice(0, lanes.length).map((port) => new Lane(port));
  process.once('exit', () => lanesOpen.forEach((lane) => lane.stop()));
  for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) {
    process.once(signal, () => process.exit(130));
  }
  await schedule(
    lanes,
    tail,
    async (step, index) => {
      const lane = /** @type {Lane} */ (lanesOpen[index]);
      const at = performance.now();
      let ok = false;
      try {
        if ('command' in step) ok = await runCommand(step);
        else {
          const { command, env } = await lane.prepare(step, tail);
          ok = await runCommand({ name: step.name, command, stream: true }, env);
        }
      } catch (error) {
        console.error(`${step.name}: ${/** @type {Error} */ (error).message}`);
      }
      results.push({ step, lane: lane.port, ok, seconds: (performance.now() - at) / 1000 });
    },
    serial,
  );
  lanesOpen.forEach((lane) => lane.stop());
  const total = (performance.now() - started) / 1000;
  console.log('\n| step | lane | result | time |\n| --- | --- | --- | --- |');
  for (const { step, lane, ok, seconds } of results) {
    console.log(`| ${step.name} | ${lane} | ${ok ? 'passed' : 'FAILED'} | ${minutes(seconds)} |`);
  }
  console.log(`| all (${serial ? 'one after another' : 'side by side'}) | | | ${minutes(total)} |`);
  // The run's floor on this machine: its work spread evenly on every core with none idle. A run
  // near it is as fast as this machine makes that work; only less work makes it faster.
  const { cores, busy, cpuSeconds } = cpuWork(cpusAtStart, cpus());
  console.log(
    `\nThe machine's ${cores} cores were busy ${Math.round(busy * 100)}% of that time: ` +
      `${Math.round(cpuSeconds)} CPU-seconds of work, which takes ${minutes(cpuSeconds / cores)} ` +
      `on ${cores} cores at the least.`,
  );
  // Last, where a log cut to its end still shows them.
  const failures = failureLines(reportFiles());
  if (failures.length) {
    console.log(`\nWhat failed in the browsers, and what passed only when retried:`);
    console.log(failures.join('\n'));
  }
  process.exit(results.every(({ ok }) => ok) ? 0 : 1);
}

/**
 * The CPU time the whole machine spent between two readings of `os.cpus()` (every process's, so
 * a run's own on a machine that runs nothing else), and the share of the cores' time it was.
 * @param {import('node:os').CpuInfo[]} before
 * @param {import('node:os').CpuInfo[]} after
 */
export function cpuWork(before, after) {
  let busyMs = 0;
  let allMs = 0;
  const all = (/** @type {import('node:os').CpuInfo['times']} */ t) =>
    t.user + t.nice + t.sys + t.irq + t.idle;
  for (const [i, { times }] of after.entries()) {
    const was = before[i]?.times;
    if (!was) continue;
    allMs += all(times) - all(was);
    busyMs += all(times) - all(was) - (times.idle - was.idle);
  }
  return { cores: after.length, busy: allMs ? busyMs / allMs : 0, cpuSeconds: busyMs / 1000 };
}

/** `m:ss` */
function minutes(/** @type {number} */ seconds) {
  const whole = Math.round(seconds);
  return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, '0')}`;
}
