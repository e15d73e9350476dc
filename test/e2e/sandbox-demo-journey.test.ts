import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StandInMessage } from '../../local/slack/server.js';
import { type RunningCalmops, startCalmops } from '../../local/start.js';
import { renderMessage } from '../support/slack-messages.js';
import { waitFor as waitUntil } from '../support/workflow-harness.js';

/**
 * The whole journey `npm start` offers, through the sandbox's own API as the page uses it: /triage on a demo
 * namespace, a hypothesis chosen and confirmed, the plan approved by a second person, the fix run on the demo
 * cluster, "resolved", the fix validated by a fresh triage, and the incident remembered by the next triage.
 */

const REQUESTER = 'UREQUESTER';
const SENIOR = 'USENIOR';
const CHANNEL = 'CINCIDENTS';
const WAIT = 60_000;

let running: RunningCalmops;
let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'calmops-demo-journey-'));
  // The test clicks faster than a person reads: no minimum time in GATHERING (docs/diagnosis.md).
  running = await startCalmops({
    env: { CALMOPS_MIN_TIME_IN_STATE_SECONDS: '0' },
    dataDir,
    port: 0,
    logLevel: 'SILENT',
    ackTimeoutMs: 30_000,
  });
});

afterAll(async () => {
  await running?.close();
  if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
});

async function post(path: string, body: unknown = {}): Promise<Record<string, unknown>> {
  const response = await fetch(`${running.origin}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = (await response.json()) as Record<string, unknown>;
  expect(response.status, JSON.stringify(answer)).toBe(200);
  return answer;
}

async function messages(): Promise<StandInMessage[]> {
  const state = (await (await fetch(`${running.origin}/sandbox/api/state`)).json()) as { messages: StandInMessage[] };
  return state.messages;
}

/** Waits for a probe to find something, polling as the product's asynchronous steps land. */
const waitFor = <T>(what: string, probe: () => Promise<T | undefined>): Promise<T> => waitUntil(what, probe, WAIT, 200);

interface Button {
  message: StandInMessage;
  block_id: string;
  action_id: string;
  value?: string;
  text: string;
}

function buttonsOf(message: StandInMessage): Button[] {
  return (message.blocks ?? []).flatMap((b) => {
    const block = b as { type?: string; block_id?: string; elements?: Array<Record<string, unknown>> };
    if (block.type !== 'actions') return [];
    return (block.elements ?? [])
      .filter((e) => e['type'] === 'button')
      .map((e) => ({
        message,
        block_id: block.block_id ?? '',
        action_id: String(e['action_id']),
        ...(typeof e['value'] === 'string' ? { value: e['value'] } : {}),
        text: String((e['text'] as { text?: string } | undefined)?.text ?? ''),
      }));
  });
}

async function threadOf(rootTs: string): Promise<StandInMessage[]> {
  return (await messages()).filter((m) => m.channel === CHANNEL && m.thread_ts === rootTs && m.ts !== rootTs);
}

const waitForText = (rootTs: string, pattern: RegExp, after = 0) =>
  waitFor(`a thread message matching ${pattern}`, async () =>
    (await threadOf(rootTs)).slice(after).find((m) => pattern.test(renderMessage(m))),
  );

const waitForButton = (rootTs: string, actionId: string, after = 0) =>
  waitFor(`a ${actionId} button`, async () => {
    for (const m of (await threadOf(rootTs)).slice(after)) {
      const button = buttonsOf(m).find((b) => b.action_id === actionId || b.action_id.startsWith(`${actionId}:`));
      if (button !== undefined) return button;
    }
    return undefined;
  });

async function click(user: string, button: Button): Promise<void> {
  await post('/sandbox/api/action', {
    user,
    container: { type: 'message', channel: CHANNEL, ts: button.message.ts },
    action: {
      action_id: button.action_id,
      block_id: button.block_id,
      type: 'button',
      ...(button.value === undefined ? {} : { value: button.value }),
      text: button.text,
    },
  });
}

async function triage(text: string): Promise<{ rootTs: string; sessionId: string }> {
  const before = new Set((await messages()).map((m) => m.ts));
  await post('/sandbox/api/compose', { user: REQUESTER, channel: CHANNEL, text });
  const root = await waitFor('the thread root', async () =>
    (await messages()).find(
      (m) => m.channel === CHANNEL && !before.has(m.ts) && m.thread_ts === undefined && /requested by/.test(m.text),
    ),
  );
  const sessionId = await waitFor('the session id', async () => {
    for (const m of await messages()) {
      const id = /session `?([0-9A-Z]{26})/.exec(renderMessage(m))?.[1];
      if (id !== undefined && !before.has(m.ts)) return id;
    }
    return undefined;
  });
  return { rootTs: root.ts, sessionId };
}

describe('the demo journey in the sandbox', () => {
  it('triages orders, approves the plan, runs the fix on the demo cluster, validates it and remembers it', async () => {
    const first = await triage('/triage crashloop in orders');
    await waitForText(first.rootTs, /CONTAINER_CRASHLOOP_CONFIG_ERROR/);

    const hypothesis = await waitForButton(first.rootTs, 'hypothesis_choose');
    await click(REQUESTER, hypothesis);
    await waitForText(first.rootTs, /Does this confirm/);
    await post('/sandbox/api/compose', {
      user: REQUESTER,
      channel: CHANNEL,
      text: 'confirmed',
      threadTs: first.rootTs,
    });

    const planAt = await waitFor('the plan for review', async () => {
      const index = (await threadOf(first.rootTs)).findIndex((m) =>
        /Remediation plan for review/.test(renderMessage(m)),
      );
      return index >= 0 ? index : undefined;
    });
    const approve = await waitForButton(first.rootTs, 'approval_approve', planAt);
    await click(SENIOR, approve);
    await waitForText(first.rootTs, /Approved plan/);

    // "Resolved" before anyone ran the fix: the fresh triage still sees the crash loop, and says so.
    const resolved = await waitForButton(first.rootTs, 'session_resolved');
    const earlyAt = (await threadOf(first.rootTs)).length;
    await click(REQUESTER, resolved);
    await waitForText(first.rootTs, /Fix not validated/, earlyAt);
    const checkAgain = await waitForButton(first.rootTs, 'session_resolved', earlyAt);
    expect(checkAgain.text).toBe('Check the fix again');

    // The engineer runs the approved plan on the demo cluster; checking again now validates the fix.
    const fixed = await post('/_sandbox/demo/orders/fix');
    expect(fixed).toMatchObject({ changed: true, namespace: { status: 'fixed' } });
    const checkAt = (await threadOf(first.rootTs)).length;
    await click(REQUESTER, checkAgain);
    await waitForText(first.rootTs, /Fix validated/, checkAt);
    await waitFor('the session to be resolved', async () => {
      const session = await running.stack.docClient.send(
        new GetCommand({ TableName: 'calmops', Key: { PK: `SESSION#${first.sessionId}`, SK: 'META' } }),
      );
      return session.Item?.['status'] === 'resolved' ? true : undefined;
    });

    // The fault comes back: the next triage of the same kind cites the stored incident.
    await post('/_sandbox/demo/orders/restore');
    const second = await triage('/triage crashloop in orders');
    const cited = await waitForText(second.rootTs, /similar incident\(s\)/i);
    expect(renderMessage(cited)).toContain(first.sessionId);
  });
});
