import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StandInMessage } from '../../local/slack/server.js';
import { type RunningCalmops, startCalmops } from '../../local/start.js';

/**
 * `npm start` with your own channel policy (CALMOPS_POLICY): only the channels it lists are answered, and the
 * cluster names it uses are all served by the one cluster `npm start` reads.
 */

let running: RunningCalmops;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'calmops-policy-'));
  const policy = join(dir, 'policy.yaml');
  await writeFile(
    policy,
    [
      '# Only #incidents is set up; it talks about prod-eu.',
      'channels:',
      '  CINCIDENTS:',
      '    cluster: prod-eu',
      '    approverGroup: SAPPROVERS',
      '    seniorGroup: SSENIORS',
      '',
    ].join('\n'),
  );
  running = await startCalmops({
    env: { CALMOPS_POLICY: policy },
    dataDir: join(dir, 'data'),
    port: 0,
    logLevel: 'SILENT',
    ackTimeoutMs: 30_000,
  });
});

afterAll(async () => {
  await running?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

async function compose(channel: string, text: string): Promise<void> {
  const response = await fetch(`${running.origin}/sandbox/api/compose`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ user: 'UREQUESTER', channel, text }),
  });
  expect(response.status).toBe(200);
}

async function waitForMessage(match: (m: StandInMessage) => boolean, what: string): Promise<StandInMessage> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const state = (await (await fetch(`${running.origin}/sandbox/api/state`)).json()) as { messages: StandInMessage[] };
    const found = state.messages.find(match);
    if (found !== undefined) return found;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('npm start with CALMOPS_POLICY', () => {
  it('triages in a listed channel, reading its cluster from the local one', async () => {
    await compose('CINCIDENTS', '/triage crashloop in orders');
    const envelope = await waitForMessage(
      (m) => m.thread_ts !== undefined && m.text.startsWith('Triage crashloop-analysis in orders'),
      'the envelope',
    );
    expect(envelope.text).toContain('CONTAINER_CRASHLOOP_CONFIG_ERROR');
  });

  it('answers an unlisted channel with how to set it up', async () => {
    await compose('CPAYMENTSONCALL', '/triage crashloop in orders');
    const refusal = await waitForMessage(
      (m) => m.channel === 'CPAYMENTSONCALL' && m.text.includes('not set up for this channel'),
      'the refusal',
    );
    expect(refusal.ephemeral_to).toBe('UREQUESTER');
  });
});
