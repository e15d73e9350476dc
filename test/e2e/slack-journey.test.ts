import { Logger } from '@aws-lambda-powertools/logger';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withDefaultStorageClassFix } from '../../bench/support/workflow-fixed-cluster.js';
import { DEMO_IDS, type StandInMessage } from '../../local/slack/index.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';
import { createSlackDepsFromEnv } from '../../src/app/slack-runtime.js';
import { createSlackHttpHandler, type SlackHttpHandler, signSlackRequest } from '../../src/slack/receiver.js';
import { fixture, waitFor } from '../support/workflow-harness.js';

/**
 * One incident from start to memory, driven only by what a person does in Slack: every step is a signed request to the
 * Slack function on the local stack (dynalite, the local Step Functions endpoint running the real state machines,
 * the snapshot API server, the Slack stand-in), and every check reads what the stand-in shows in the thread.
 */

const { requester, senior } = DEMO_IDS;
const channel = DEMO_IDS.incidents;

interface Button {
  action_id: string;
  value: string;
}

describe('an incident through Slack, end to end', () => {
  let stack: LocalStack;
  let handle: SlackHttpHandler;
  let secret: string;
  let counter = 0;

  beforeAll(async () => {
    stack = await startLocalStack({ snapshot: fixture('pvc-binding--no-default-storageclass'), logLevel: 'SILENT' });
    secret = stack.env['SLACK_SIGNING_SECRET'] ?? '';
    handle = createSlackHttpHandler(
      await createSlackDepsFromEnv(stack.env, {
        logger: new Logger({ serviceName: 'calmops-slack', logLevel: 'SILENT' }),
      }),
    );
  });
  afterAll(async () => {
    await stack?.close();
  });

  const slack = () => {
    if (stack.slack === undefined) throw new Error('the stack did not start the Slack stand-in');
    return stack.slack;
  };

  async function post(body: string, contentType: string) {
    const response = await handle({
      headers: { 'content-type': contentType, ...signSlackRequest(secret, body, Date.now() / 1000) },
      body,
      isBase64Encoded: false,
    });
    expect(response.statusCode).toBe(200);
    return response;
  }

  async function triage(text: string) {
    const body = new URLSearchParams({
      command: '/triage',
      text,
      user_id: requester,
      channel_id: channel,
      team_id: DEMO_IDS.team,
      trigger_id: `trigger.${++counter}`,
    }).toString();
    const reply = JSON.parse((await post(body, 'application/x-www-form-urlencoded')).body) as { text: string };
    const sessionId = /session `([^`]+)`/.exec(reply.text)?.[1];
    if (sessionId === undefined) throw new Error(`no session started: ${reply.text}`);
    const root = slack()
      .messages(channel)
      .filter((m) => m.thread_ts === undefined && m.bot_id !== undefined)
      .at(-1);
    return { sessionId, threadTs: root?.ts ?? '' };
  }

  async function say(threadTs: string, text: string, user = requester) {
    const message = slack().addUserMessage({ channel, user, text, thread_ts: threadTs });
    const body = JSON.stringify({
      type: 'event_callback',
      team_id: DEMO_IDS.team,
      event_id: `Ev${++counter}`,
      event: { type: 'message', channel_type: 'channel', user, text, ts: message.ts, thread_ts: threadTs, channel },
    });
    await post(body, 'application/json');
  }

  const thread = (threadTs: string) =>
    slack()
      .messages(channel)
      .filter((m) => m.thread_ts === threadTs);
  const render = (m: StandInMessage) => `${m.text}\n${JSON.stringify(m.blocks ?? [])}`;

  const waitForText = (threadTs: string, pattern: RegExp, timeoutMs = 30_000) =>
    waitFor(
      `a thread message matching ${pattern}`,
      async () => thread(threadTs).find((m) => pattern.test(render(m))),
      timeoutMs,
    );

  function buttons(message: StandInMessage): Button[] {
    return (message.blocks ?? []).flatMap((b) => {
      const block = b as { type?: string; elements?: { type?: string; action_id?: string; value?: string }[] };
      return block.type === 'actions'
        ? (block.elements ?? [])
            .filter((e) => e.type === 'button' && e.action_id !== undefined)
            .map((e) => ({ action_id: e.action_id as string, value: e.value ?? '' }))
        : [];
    });
  }

  const waitForButton = (threadTs: string, actionId: string, after = 0) =>
    waitFor(
      `a ${actionId} button`,
      async () => {
        for (const m of thread(threadTs).slice(after)) {
          const button = buttons(m).find((b) => b.action_id === actionId || b.action_id.startsWith(`${actionId}:`));
          if (button !== undefined) return { message: m, button };
        }
        return undefined;
      },
      30_000,
    );

  async function click(user: string, message: StandInMessage, button: Button) {
    const payload = {
      type: 'block_actions',
      user: { id: user, team_id: DEMO_IDS.team },
      team: { id: DEMO_IDS.team },
      channel: { id: channel },
      container: { type: 'message', channel_id: channel, message_ts: message.ts },
      message: { ts: message.ts, thread_ts: message.thread_ts, text: message.text, blocks: message.blocks ?? [] },
      trigger_id: `trigger.${++counter}`,
      actions: [
        {
          type: 'button',
          action_id: button.action_id,
          value: button.value,
          action_ts: `${Date.now() / 1000}${++counter}`,
        },
      ],
    };
    await post(
      new URLSearchParams({ payload: JSON.stringify(payload) }).toString(),
      'application/x-www-form-urlencoded',
    );
  }

  it('triages, hands off, calms, tests, reviews, resolves and remembers', async () => {
    const first = await triage('pvc stuck pending in student03');
    await waitForText(first.threadTs, /pvc-binding/);
    await waitForText(first.threadTs, /similar incident/i);

    // An ask-first handoff, approved by the requester with the button.
    await say(first.threadTs, 'ask the storage specialist');
    const handoff = await waitForButton(first.threadTs, 'approval_approve');
    await click(requester, handoff.message, handoff.button);
    await waitForText(first.threadTs, /Findings report/);
    const decidedHandoff = thread(first.threadTs).find((m) => m.ts === handoff.message.ts);
    expect(decidedHandoff?.edited).toBeDefined();
    expect(buttons(decidedHandoff as StandInMessage)).toEqual([]);

    // A premature delete of everything is held back with the calming message, and the session goes back to
    // ANALYZING with a new reasoning cycle: the memory search it recommends comes first again.
    await say(first.threadTs, 'kubectl delete pvc --all -n student03');
    await waitForText(first.threadTs, /Hold on/);
    const searchedAt = thread(first.threadTs).length;
    await say(first.threadTs, 'have we seen this before?');
    await waitFor('the memory search answer', async () =>
      thread(first.threadTs)
        .slice(searchedAt)
        .find((m) => /similar incident/i.test(render(m))),
    );

    // Choose the first hypothesis, confirm it.
    const hypothesis = await waitForButton(first.threadTs, 'hypothesis_choose');
    await click(requester, hypothesis.message, hypothesis.button);
    await waitForText(first.threadTs, /Does this confirm/);
    await say(first.threadTs, 'confirmed');

    // The plan is reviewed and approved by a second person.
    const planAt = thread(first.threadTs).findIndex((m) => /Remediation plan for review/.test(render(m)));
    const plan = await waitForButton(first.threadTs, 'approval_approve', Math.max(0, planAt));
    await click(senior, plan.message, plan.button);
    await waitForText(first.threadTs, /Approved plan/);
    const decidedPlan = thread(first.threadTs).find((m) => m.ts === plan.message.ts) as StandInMessage;
    expect(render(decidedPlan)).toMatch(new RegExp(`Approved by <@${senior}>`));
    expect(buttons(decidedPlan)).toEqual([]);

    // A human runs the approved plan (the served cluster is swapped for its fixed version); "resolved" re-runs the
    // triage, sees the fault gone, and only then stores the incident in memory.
    const broken = fixture('pvc-binding--no-default-storageclass');
    stack.kube?.setObjects(withDefaultStorageClassFix(broken.objects), broken.logs);
    const resolved = await waitForButton(first.threadTs, 'session_resolved');
    await click(requester, resolved.message, resolved.button);
    await waitFor(
      'the session to be resolved',
      async () => {
        const session = await stack.docClient.send(
          new GetCommand({ TableName: 'calmops', Key: { PK: `SESSION#${first.sessionId}`, SK: 'META' } }),
        );
        return session.Item?.['status'] === 'resolved';
      },
      30_000,
    );

    await waitForText(first.threadTs, /Fix validated/);

    // The same fault comes back elsewhere in time: a second, similar triage cites the first incident.
    stack.kube?.setObjects(broken.objects, broken.logs);
    const second = await triage('pvc stuck pending in student03');
    const cited = await waitForText(second.threadTs, /similar incident\(s\)/i);
    expect(render(cited)).toContain(first.sessionId);
  });
});
