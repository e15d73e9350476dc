import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * `npm start` as a process, for the harnesses that must crash it: the crash-and-restart test and the recovery
 * benchmark. It runs exactly what `npm start` runs (`node local/launch.mjs`), in its own process group, so a
 * `kill -9` takes the whole product down at once, as a power cut or an OOM kill would.
 */

export interface CalmopsProcess {
  /** e.g. `http://127.0.0.1:41234` */
  origin: string;
  pid: number;
  /** What `/healthz` reported once every service was up: the endpoints of DynamoDB, Step Functions, Slack. */
  services: Record<string, { url: string; up: boolean }>;
  /** Settles with the exit code (or the signal's name) once the process is gone. */
  exited: Promise<number | string>;
  /** Everything the process wrote, for a failure's message. */
  output(): string;
  /** SIGKILL to the whole process group: nothing gets to clean up. */
  killHard(): Promise<void>;
  /** SIGTERM to the process, then waits for it to exit. */
  stop(): Promise<number | string>;
}

export interface SpawnCalmopsOptions {
  dataDir: string;
  port: number;
  signingSecret: string;
  /** More environment (e.g. CALMOPS_RECONCILE_SECONDS). */
  env?: Record<string, string>;
  /** How long to wait for `/healthz` to answer 200. */
  readyTimeoutMs?: number;
}

class CalmopsProcessError extends Error {
  override readonly name = 'CalmopsProcessError';
}

const launcher = fileURLToPath(new URL('./launch.mjs', import.meta.url));

function exitOf(child: ChildProcess): Promise<number | string> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode ?? String(child.signalCode));
    else child.once('exit', (code, signal) => resolve(code ?? String(signal)));
  });
}

export async function spawnCalmops(options: SpawnCalmopsOptions): Promise<CalmopsProcess> {
  const child = spawn(process.execPath, [launcher], {
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      PORT: String(options.port),
      CALMOPS_DATA_DIR: options.dataDir,
      SLACK_SIGNING_SECRET: options.signingSecret,
      ...options.env,
    },
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  const exited = exitOf(child);
  const origin = `http://127.0.0.1:${options.port}`;
  const pid = child.pid ?? 0;
  const killHard = async () => {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
    await exited;
  };

  const until = Date.now() + (options.readyTimeoutMs ?? 60_000);
  let services: CalmopsProcess['services'] | undefined;
  while (services === undefined) {
    const early = await Promise.race([exited, new Promise((r) => setTimeout(r, 100, undefined))]);
    if (early !== undefined) throw new CalmopsProcessError(`calmops exited (${early}) before it was ready:\n${output}`);
    try {
      const response = await fetch(`${origin}/healthz`);
      if (response.status === 200) {
        services = ((await response.json()) as { services: CalmopsProcess['services'] }).services;
      }
    } catch {
      // Not listening yet.
    }
    if (services === undefined && Date.now() > until) {
      await killHard();
      throw new CalmopsProcessError(`calmops was not ready within ${options.readyTimeoutMs ?? 60_000} ms:\n${output}`);
    }
  }
  return {
    origin,
    pid,
    services,
    exited,
    output: () => output,
    killHard,
    async stop() {
      child.kill('SIGTERM');
      return exited;
    },
  };
}
