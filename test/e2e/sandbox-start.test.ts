import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxState } from '../../local/sandbox/server.js';

/**
 * `npm start` as a person runs it: a separate process that prints one block, answers /healthz, serves the Slack
 * endpoint and the sandbox, stops cleanly on Ctrl-C, and finds its sessions again on the next start.
 */

const root = fileURLToPath(new URL('../..', import.meta.url));
let dataDir: string;
const children: ChildProcess[] = [];

interface Started {
  child: ChildProcess;
  origin: string;
  output: () => string;
  exited: Promise<number | null>;
}

async function start(): Promise<Started> {
  // What `npm start` runs.
  const child = spawn(process.execPath, ['local/launch.mjs'], {
    cwd: root,
    env: { ...process.env, PORT: '0', CALMOPS_DATA_DIR: dataDir, KUBECONFIG: '', CALMOPS_SNAPSHOT: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + 90_000;
  let origin: string | undefined;
  while (origin === undefined && Date.now() < deadline && child.exitCode === null) {
    origin = /open (http:\/\/127\.0\.0\.1:\d+)\/sandbox\//.exec(output)?.[1];
    if (origin === undefined) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (origin === undefined) {
    child.kill('SIGKILL');
    throw new Error(`npm start printed no sandbox URL:\n${output}`);
  }
  return { child, origin, output: () => output, exited };
}

async function compose(origin: string, text: string): Promise<void> {
  const response = await fetch(`${origin}/sandbox/api/compose`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ user: 'UREQUESTER', channel: 'CINCIDENTS', text }),
  });
  expect(response.status).toBe(200);
}

async function state(origin: string): Promise<SandboxState> {
  return (await (await fetch(`${origin}/sandbox/api/state`)).json()) as SandboxState;
}

async function waitFor<T>(
  probe: () => Promise<T | undefined>,
  what: string,
  detail: () => Promise<string> = async () => '',
): Promise<T> {
  // A guard against a hang, sized for a shared machine running two suites at once.
  const deadline = Date.now() + 240_000;
  while (Date.now() < deadline) {
    const found = await probe();
    if (found !== undefined) return found;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`timed out waiting for ${what}${await detail()}`);
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'calmops-start-'));
});

afterAll(async () => {
  // A failed assertion must not leave a stack running.
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await rm(dataDir, { recursive: true, force: true });
});

describe('npm start', () => {
  it('starts, prints one block, stops on Ctrl-C, and resumes stored sessions on the next start', async () => {
    const first = await start();
    const health = await fetch(`${first.origin}/healthz`);
    expect(health.status).toBe(200);
    const report = (await health.json()) as { services: Record<string, { up: boolean }> };
    expect(Object.keys(report.services).sort()).toEqual(['dynamodb', 'kubernetes', 'slack', 'stepfunctions']);
    expect(first.output()).toContain('payments');
    expect(first.output()).toContain('KUBECONFIG=');
    expect(first.output()).not.toContain('NodeVersionSupportWarning');

    // The generated signing secret is kept for the next start, readable only by its owner.
    const secretFile = join(dataDir, 'signing-secret');
    expect((await stat(secretFile)).mode & 0o077).toBe(0);
    const secret = await readFile(secretFile, 'utf8');

    // An unsigned request to the Slack endpoint is refused by the Lambda's handler.
    const unsigned = await fetch(`${first.origin}/slack/events`, { method: 'POST', body: '{}' });
    expect(unsigned.status).toBe(401);

    await compose(first.origin, '/triage crashloop in orders');
    // The session's id is in the acknowledgement and in the envelope: on a machine busy enough for the acknowledgement
    // to miss Slack's 3 s, Slack drops it and shows the requester `operation_timeout`, and the thread still gets the
    // envelope.
    const sessionOf = (text: string) => /session `?([0-9A-Z]{26})/i.exec(text)?.[1];
    const sessionId = await waitFor(
      async () =>
        (await state(first.origin)).messages.map((m) => sessionOf(JSON.stringify(m))).find((id) => id !== undefined),
      'the session to start',
      async () => {
        const shown = (await state(first.origin)).messages.map((m) => m.text).join('\n');
        return `; the page shows:\n${shown}\nnpm start printed:\n${first.output()}`;
      },
    );
    const rootTs = await waitFor(async () => {
      const messages = (await (await fetch(`${first.origin}/_slack/messages?channel=CINCIDENTS`)).json()) as {
        ts: string;
        text: string;
        thread_ts?: string;
      }[];
      const envelope = messages.find(
        (m) => m.thread_ts !== undefined && m.text.startsWith('Triage crashloop-analysis'),
      );
      return envelope?.thread_ts;
    }, 'the envelope in the thread');

    first.child.kill('SIGINT');
    expect(await first.exited).toBe(0);

    const second = await start();
    try {
      // The bundle the first start ran (or that npm install prepared) is reused as it is.
      expect(second.output()).not.toContain('Preparing calmops');
      expect(await readFile(secretFile, 'utf8')).toBe(secret);
      // The conversation is back on the page, and the store still knows the open session.
      expect((await state(second.origin)).messages.some((m) => m.ts === rootTs)).toBe(true);
      await compose(second.origin, '/triage list');
      await waitFor(async () => {
        const messages = (await state(second.origin)).messages;
        return messages.some((m) => m.ephemeral_to === 'UREQUESTER' && JSON.stringify(m).includes(sessionId))
          ? true
          : undefined;
      }, 'the stored session in /triage list');
    } finally {
      second.child.kill('SIGINT');
      expect(await second.exited).toBe(0);
    }
  });

  it('prepares the first start at install time (npm install runs the prepare script)', async () => {
    const child = spawn(process.execPath, ['local/launch.mjs', '--prepare'], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let errors = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      errors += chunk.toString();
    });
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(0);
    // Failures do not fail the install, so they only show here.
    expect(errors).toBe('');
    const cache = join(root, 'node_modules', '.cache', 'calmops');
    const validated = JSON.parse(await readFile(join(cache, 'validated-definitions.json'), 'utf8')) as {
      hashes: string[];
    };
    expect(validated.hashes.length).toBeGreaterThanOrEqual(3);
    expect((await readdir(join(cache, 'snapshots'))).length).toBeGreaterThanOrEqual(1);
    expect((await stat(join(cache, 'start.mjs'))).size).toBeGreaterThan(0);
  });
});
