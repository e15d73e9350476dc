import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnCalmops } from '../../local/calmops-process.js';
import { freePort } from '../../local/free-port.js';

/**
 * `npm start` whose parent dies by `kill -9` (npm, a terminal, a supervisor): the server notices it was left alone
 * and stops, freeing its port and data directory, so the next start on them works.
 */

const root = fileURLToPath(new URL('../..', import.meta.url));
const pids: number[] = [];

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(what: string, probe: () => boolean, timeoutMs: number, output = () => ''): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; the output so far:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

afterAll(() => {
  for (const pid of pids) if (running(pid)) process.kill(pid, 'SIGKILL');
});

describe('npm start when its parent is killed', () => {
  it('stops by itself, and the next start on the same port and data directory works', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'calmops-orphan-'));
    const port = await freePort();
    try {
      // The parent: a process that starts calmops as npm does, then is killed with no chance to pass anything on.
      const parent = spawn(
        process.execPath,
        [
          '-e',
          `const c = require('node:child_process').spawn(process.execPath, ['local/launch.mjs'], { stdio: ['ignore', 'inherit', 'inherit'] });
           console.log('CHILD ' + c.pid); setInterval(() => {}, 1000);`,
        ],
        {
          cwd: root,
          env: { ...process.env, PORT: String(port), CALMOPS_DATA_DIR: dataDir, KUBECONFIG: '', CALMOPS_SNAPSHOT: '' },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let output = '';
      parent.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      parent.stderr?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      await until(
        'calmops to start',
        () => /Ctrl-C stops everything/.test(output),
        120_000,
        () => output,
      );
      const child = Number(/CHILD (\d+)/.exec(output)?.[1]);
      pids.push(child, parent.pid ?? 0);
      expect(running(child)).toBe(true);

      process.kill(parent.pid ?? 0, 'SIGKILL');
      // A guard against a hang, sized for a shared machine running two suites at once: noticing the parent is gone
      // takes half a second, stopping the stack up to its own ten-second deadline, and a busy machine stretches both.
      await until('the orphaned server to stop', () => !running(child), 120_000);

      const next = await spawnCalmops({ dataDir, port, signingSecret: 'orphan-test-signing-secret-3c9d' });
      pids.push(next.pid);
      const health = await fetch(`${next.origin}/healthz`);
      expect(health.status).toBe(200);
      await next.stop();
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 240_000);
});
