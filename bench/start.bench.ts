import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * How long `npm start` takes until every service listens and `/healthz` answers 200: `tsx local/start.ts` is
 * spawned as a user would run it (a fresh process each run, a fresh data directory for the cold runs, the same
 * directory again for warm restarts), and `/healthz` is polled every 25 ms. The budget is 5 s.
 */

const RUNS = Number(process.env['CALMOPS_BENCH_START_RUNS'] ?? 5);
const root = fileURLToPath(new URL('..', import.meta.url));
const BUDGET_MS = 5_000;

interface Run {
  kind: 'cold' | 'restart';
  readyMs: number;
  stopMs: number;
  exitCode: number | null;
}

function freePort(): number {
  return 20_000 + Math.floor(Math.random() * 20_000);
}

async function once(kind: Run['kind'], dataDir: string): Promise<Run> {
  const port = freePort();
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', 'local/start.ts'], {
    cwd: root,
    env: { ...process.env, PORT: String(port), CALMOPS_DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
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
    child.kill('SIGKILL');
    throw new Error(`npm start did not become healthy within 60 s:\n${output}`);
  }
  const stopping = performance.now();
  child.kill('SIGINT');
  const exitCode = await exited;
  return { kind, readyMs, stopMs: performance.now() - stopping, exitCode };
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
  for (let i = 0; i < RUNS; i += 1) {
    const dataDir = await mkdtemp(join(tmpdir(), 'calmops-start-bench-'));
    try {
      runs.push(await once('cold', dataDir));
      // A second start on the same data directory: what a returning user sees (sessions on disk).
      runs.push(await once('restart', dataDir));
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }
  const cold = runs.filter((r) => r.kind === 'cold');
  const restart = runs.filter((r) => r.kind === 'restart');
  const result = {
    runs: runs.length,
    budgetMs: BUDGET_MS,
    machine: { cpus: cpus().length, loadAverage1mBefore: loadBefore, loadAverage1mAfter: loadavg()[0] },
    readyMs: {
      cold: stats(cold.map((r) => r.readyMs)),
      restart: stats(restart.map((r) => r.readyMs)),
    },
    stopMs: stats(runs.map((r) => r.stopMs)),
    cleanExits: runs.filter((r) => r.exitCode === 0).length,
    withinBudget: runs.filter((r) => r.readyMs < BUDGET_MS).length,
    samples: runs.map((r) => ({
      kind: r.kind,
      readyMs: Math.round(r.readyMs),
      stopMs: Math.round(r.stopMs),
      exitCode: r.exitCode,
    })),
  };
  process.stdout.write(
    `npm start ready (healthz 200): cold p50 ${result.readyMs.cold.p50} ms (max ${result.readyMs.cold.max}), ` +
      `restart p50 ${result.readyMs.restart.p50} ms (max ${result.readyMs.restart.max}); ` +
      `${result.withinBudget}/${runs.length} under ${BUDGET_MS} ms; stop p50 ${result.stopMs.p50} ms; ` +
      `${result.cleanExits}/${runs.length} clean exits\n`,
  );
  return result;
}
