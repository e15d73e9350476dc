import { spawn } from 'node:child_process';
import { once as eventOnce } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../local/free-port.js';

/**
 * How long `npm start` takes until every service listens and `/healthz` answers 200. `npm start` itself is spawned
 * as a user would run it, in its own process group, and stopped as Ctrl-C stops it (SIGINT to the whole group);
 * `/healthz` is polled every 25 ms. Each of RUNS rounds, from an empty node_modules/.cache/calmops:
 * - uncached: `npm start` with nothing prepared (as after `npm install --ignore-scripts`, or with the cache
 *   deleted), so the stack is bundled, the state machines validated and the demo cluster parsed first;
 * - prepare: how long `npm run prepare` takes, the same work done by `npm install` (not a start);
 * - cold: the first `npm start` after that install, on a fresh data directory;
 * - restart: the same data directory again (sessions on disk), what a returning user sees.
 * The budget is 5 s for a start after `npm install` (cold and restart).
 */

const RUNS = Number(process.env['CALMOPS_BENCH_START_RUNS'] ?? 5);
const root = fileURLToPath(new URL('..', import.meta.url));
const BUDGET_MS = 5_000;
const cacheDir = join(root, 'node_modules', '.cache', 'calmops');

interface Run {
  kind: 'uncached' | 'cold' | 'restart';
  readyMs: number;
  stopMs: number;
  /** npm's exit: a code, or the signal it died of (npm ends with the Ctrl-C it forwarded). */
  exit: string;
  /** calmops said it was stopping, and no process of the group was left once npm had exited. */
  clean: boolean;
}

function groupAlive(group: number): boolean {
  try {
    process.kill(-group, 0);
    return true;
  } catch {
    return false;
  }
}

async function once(kind: Run['kind'], dataDir: string): Promise<Run> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn('npm', ['start'], {
    cwd: root,
    env: { ...process.env, PORT: String(port), CALMOPS_DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const group = child.pid as number;
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code === null ? String(signal) : String(code))),
  );
  let readyMs = Number.NaN;
  const deadline = started + 60_000;
  while (performance.now() < deadline && child.exitCode === null) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/healthz`);
      if (response.status === 200) {
        readyMs = performance.now() - started;
        break;
      }
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  if (Number.isNaN(readyMs)) {
    process.kill(-group, 'SIGKILL');
    throw new Error(`npm start did not become healthy within 60 s:\n${output}`);
  }
  const stopping = performance.now();
  process.kill(-group, 'SIGINT');
  const exit = await exited;
  const stopMs = performance.now() - stopping;
  // The node process may outlive npm by a moment; give it a second before calling it left behind.
  let alive = groupAlive(group);
  for (let i = 0; alive && i < 40; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    alive = groupAlive(group);
  }
  if (alive) process.kill(-group, 'SIGKILL');
  const clean = !alive && output.includes('stopping calmops') && (exit === '0' || exit === 'SIGINT');
  return { kind, readyMs, stopMs, exit, clean };
}

async function prepare(): Promise<number> {
  const started = performance.now();
  const child = spawn('npm', ['run', 'prepare'], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
  let errors = '';
  child.stderr.on('data', (chunk: Buffer) => {
    errors += chunk.toString();
  });
  const [code] = (await eventOnce(child, 'exit')) as [number | null];
  if (code !== 0 || errors.includes('calmops:')) throw new Error(`npm run prepare failed:\n${errors}`);
  return performance.now() - started;
}

function stats(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  const round = (n: number) => Math.round(n);
  return {
    min: round(sorted[0] ?? Number.NaN),
    p50: round(at(0.5)),
    max: round(sorted.at(-1) ?? Number.NaN),
    mean: round(values.reduce((a, b) => a + b, 0) / values.length),
  };
}

export default async function bench(): Promise<object> {
  // Start-up time is mostly CPU: on a shared machine the load says how much of it the figures can be trusted for.
  const loadBefore = loadavg()[0];
  const runs: Run[] = [];
  const prepareMs: number[] = [];
  for (let i = 0; i < RUNS; i += 1) {
    const dataDir = await mkdtemp(join(tmpdir(), 'calmops-start-bench-'));
    try {
      await rm(cacheDir, { recursive: true, force: true });
      runs.push(await once('uncached', dataDir));
      await rm(dataDir, { recursive: true, force: true });
      await rm(cacheDir, { recursive: true, force: true });
      prepareMs.push(await prepare());
      runs.push(await once('cold', dataDir));
      // A second start on the same data directory: what a returning user sees (sessions on disk).
      runs.push(await once('restart', dataDir));
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }
  const uncached = runs.filter((r) => r.kind === 'uncached');
  const cold = runs.filter((r) => r.kind === 'cold');
  const restart = runs.filter((r) => r.kind === 'restart');
  const warm = [...cold, ...restart];
  const result = {
    runs: runs.length,
    budgetMs: BUDGET_MS,
    machine: { cpus: cpus().length, loadAverage1mBefore: loadBefore, loadAverage1mAfter: loadavg()[0] },
    readyMs: {
      uncached: stats(uncached.map((r) => r.readyMs)),
      cold: stats(cold.map((r) => r.readyMs)),
      restart: stats(restart.map((r) => r.readyMs)),
    },
    stopMs: stats(runs.map((r) => r.stopMs)),
    cleanExits: runs.filter((r) => r.clean).length,
    prepareMs: stats(prepareMs),
    withinBudget: {
      coldAndRestart: `${warm.filter((r) => r.readyMs < BUDGET_MS).length}/${warm.length}`,
      uncached: `${uncached.filter((r) => r.readyMs < BUDGET_MS).length}/${uncached.length}`,
    },
    samples: runs.map((r) => ({
      kind: r.kind,
      readyMs: Math.round(r.readyMs),
      stopMs: Math.round(r.stopMs),
      exit: r.exit,
      clean: r.clean,
    })),
  };
  process.stdout.write(
    `npm start ready (healthz 200): cold p50 ${result.readyMs.cold.p50} ms (max ${result.readyMs.cold.max}), ` +
      `restart p50 ${result.readyMs.restart.p50} ms (max ${result.readyMs.restart.max}), ` +
      `uncached p50 ${result.readyMs.uncached.p50} ms (max ${result.readyMs.uncached.max}); under ${BUDGET_MS} ms: ` +
      `cold and restart ${result.withinBudget.coldAndRestart}, uncached ${result.withinBudget.uncached}; ` +
      `npm run prepare p50 ${result.prepareMs.p50} ms; ` +
      `stop p50 ${result.stopMs.p50} ms; ` +
      `${result.cleanExits}/${runs.length} clean exits\n`,
  );
  return result;
}
