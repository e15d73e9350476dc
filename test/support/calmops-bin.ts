import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The installed command, as npm links it: what a user runs. */
export const CALMOPS_BIN = join(fileURLToPath(new URL('../../', import.meta.url)), 'bin/calmops.js');

/** How a run of the command ended and what it printed. */
export interface CalmopsRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CollectOptions {
  /** When the child is killed, so a command that never ends fails its test instead of hanging it. */
  timeoutMs?: number;
}

/** Waits for a child to exit, keeping everything it printed on stdout and stderr. */
export function collectOutput(child: ChildProcess, options: CollectOptions = {}): Promise<CalmopsRun> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr?.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs `node bin/calmops.js <args>` in a child process, in a pipe, as a user's shell would. */
export function runCalmopsBin(
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<CalmopsRun> {
  const child = spawn(process.execPath, [CALMOPS_BIN, ...args], { cwd: options.cwd, env: options.env });
  return collectOutput(child, options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs });
}
