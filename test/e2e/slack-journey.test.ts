import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { withDefaultStorageClassFix } from '../../bench/support/workflow-fixed-cluster.js';
import { DEMO_IDS, type StandInMessage } from '../../local/slack/index.js';
import { useSlackOnStack } from '../support/slack-local-stack.js';
import { buttonsOf, renderMessage } from '../support/slack-messages.js';
import { fixture, waitFor } from '../support/workflow-harness.js';

/**
 * One incident from start to memory, driven only by what a person does in Slack: every step is a signed request to the
 * Slack function on the local stack (dynalite, the local Step Functions endpoint running the real state machines,
 * the snapshot API server, the Slack stand-in), and every check reads what the stand-in shows in the thread.
 */

const { requester, senior } = DEMO_IDS;
const channel = DEMO_IDS.incidents;

describe('an incident through Slack, end to end', () => {
  const { stack, slack, triage, say, click } = useSlackOnStack({
    snapshot: fixture('pvc-binding--no-default-storageclass'),
  });

  const thread = (threadTs: string) =>
    slack()
      .messages(channel)
      .filter((m) => m.thread_ts === threadTs);

  const waitForText = (threadTs: string, pattern: RegExp, timeoutMs = 30_000) =>
    waitFor(
      `a thread message matching ${pattern}`,
      async () => thread(threadTs).find((m) => pattern.test(renderMessage(m))),
      timeoutMs,
    );

  const waitForButton = (threadTs: string, actionId: string, after = 0) =>
    waitFor(
      `a ${actionId} button`,
      async () => {
        for (const m of thread(threadTs).slice(after)) {
          const button = buttonsOf(m).find((b) => b.action_id === actionId || b.action_id.startsWith(`${actionId}:`));
          if (button !== undefined) return { message: m, button };
        }
        return undefined;
      },
      30_000,
    );

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
    expect(buttonsOf(decidedHandoff as StandInMessage)).toEqual([]);

    // A premature delete of everything is held back with the calming message, and the session goes back to
    // ANALYZING with a new reasoning cycle: the memory search it recommends comes first again.
    await say(first.threadTs, 'kubectl delete pvc --all -n student03');
    await waitForText(first.threadTs, /Hold on/);
    const searchedAt = thread(first.threadTs).length;
    await say(first.threadTs, 'have we seen this before?');
    await waitFor('the memory search answer', async () =>
      thread(first.threadTs)
        .slice(searchedAt)
        .find((m) => /similar incident/i.test(renderMessage(m))),
    );

    // Choose the first hypothesis, confirm it.
    const hypothesis = await waitForButton(first.threadTs, 'hypothesis_choose');
    await click(requester, hypothesis.message, hypothesis.button);
    await waitForText(first.threadTs, /Does this confirm/);
    await say(first.threadTs, 'confirmed');

    // The plan is reviewed and approved by a second person.
    const planAt = thread(first.threadTs).findIndex((m) => /Remediation plan for review/.test(renderMessage(m)));
    const plan = await waitForButton(first.threadTs, 'approval_approve', Math.max(0, planAt));
    await click(senior, plan.message, plan.button);
    await waitForText(first.threadTs, /Approved plan/);
    const decidedPlan = thread(first.threadTs).find((m) => m.ts === plan.message.ts) as StandInMessage;
    expect(renderMessage(decidedPlan)).toMatch(new RegExp(`Approved by <@${senior}>`));
    expect(buttonsOf(decidedPlan)).toEqual([]);

    // A human runs the approved plan (the served cluster is swapped for its fixed version); "resolved" re-runs the
    // triage, sees the fault gone, and only then stores the incident in memory.
    const broken = fixture('pvc-binding--no-default-storageclass');
    stack().kube?.setObjects(withDefaultStorageClassFix(broken.objects), broken.logs);
    const resolved = await waitForButton(first.threadTs, 'session_resolved');
    await click(requester, resolved.message, resolved.button);
    await waitFor(
      'the session to be resolved',
      async () => {
        const session = await stack().docClient.send(
          new GetCommand({ TableName: 'calmops', Key: { PK: `SESSION#${first.sessionId}`, SK: 'META' } }),
        );
        return session.Item?.['status'] === 'resolved';
      },
      30_000,
    );

    await waitForText(first.threadTs, /Fix validated/);

    // The same fault comes back elsewhere in time: a second, similar triage cites the first incident.
    stack().kube?.setObjects(broken.objects, broken.logs);
    const second = await triage('pvc stuck pending in student03');
    const cited = await waitForText(second.threadTs, /similar incident\(s\)/i);
    expect(renderMessage(cited)).toContain(first.sessionId);
  });
});
