import { Logger } from '@aws-lambda-powertools/logger';
import { describe, expect, it } from 'vitest';
import { createSlackDepsFromEnv } from '../../../src/app/slack-runtime.js';
import type { RemediationPlan } from '../../../src/review/plan.js';
import { statusView } from '../../../src/views/sessions.js';
import {
  chooseHypothesis,
  DEMO_IDS,
  decide,
  type Harness,
  openSession,
  say,
  threadTexts,
  useHarness,
  waitFor,
  waitForInputWait,
  waitForThread,
} from '../../support/workflow-harness.js';

/**
 * The guided diagnosis through the real workflow (local Step Functions running the state machines, dynalite, the
 * snapshot API server): a button walks the states a sentence would, RESOLVING waits for an approved plan, the
 * approved plan's steps run without a panic warning, and a reply held behind a review is acknowledged at once.
 */

const chooseFirst = async (h: Harness, sessionId: string, key: string) => {
  const hypothesis = (await h.deps.artifacts.getWorkflow(sessionId))?.hypotheses[0];
  await chooseHypothesis(h, sessionId, hypothesis?.id ?? '', `test hypothesis ${hypothesis?.id}`, key);
};

async function stateChanges(h: Harness, sessionId: string) {
  return (await h.deps.store.timeline.list(sessionId))
    .filter((e) => e.type === 'state.changed')
    .map((e) => ({ hop: `${e.data?.['from']}>${e.data?.['to']}`, reason: e.summary ?? '' }));
}

describe('a hypothesis button under GATHERING’s minimum time', () => {
  const h = useHarness({ minTimeInStateSeconds: 30 });

  it('is refused with what is left while GATHERING lasts, then walks every state with its reason', async () => {
    const { sessionId, threadTs } = await openSession(h);
    await waitForThread(h, threadTs, /similar incident/i);
    await waitForInputWait(h, sessionId);
    // The triage landed within GATHERING's 30 s: the session is still gathering.
    expect((await h.deps.store.sessions.getRequired(sessionId)).state).toBe('GATHERING');

    await chooseFirst(h, sessionId, 'b1');
    const notYet = await waitForThread(
      h,
      threadTs,
      /Not yet:.*GATHERING lasts at least 30 s before the evidence may move it on/s,
    );
    // A Test click asks for no change, so it is not told to wait "before making changes".
    expect(notYet).not.toMatch(/before making changes/);
    expect(notYet).toMatch(/The session is gathering evidence about what is happening/);
    await waitForInputWait(h, sessionId);
    expect((await h.deps.store.sessions.getRequired(sessionId)).state).toBe('GATHERING');
    expect(threadTexts(h, threadTs).some((t) => /Does this confirm/.test(t))).toBe(false);

    // The recorded state-entry time is what the rule reads: GATHERING began 31 s ago.
    await h.deps.artifacts.mutateWorkflow(sessionId, new Date(), (w) => ({
      ...w,
      stateEnteredAt: new Date(Date.now() - 31_000).toISOString(),
    }));
    await chooseFirst(h, sessionId, 'b2');
    await waitForThread(h, threadTs, /Does this confirm/);
    expect((await h.deps.store.sessions.getRequired(sessionId)).state).toBe('TESTING');
    const changes = await stateChanges(h, sessionId);
    expect(changes.map((c) => c.hop)).toEqual([
      'GATHERING>ANALYZING',
      'ANALYZING>HYPOTHESIZING',
      'HYPOTHESIZING>TESTING',
    ]);
    for (const change of changes) expect(change.reason).toMatch(/requirements met \(/);
  });
});

describe('from a confirmed root cause to the approved plan’s steps', () => {
  const h = useHarness();

  it('reaches RESOLVING only on approval, acknowledges a reply held behind the review, and runs the plan calmly', async () => {
    const { sessionId, threadTs } = await openSession(h);
    await waitForThread(h, threadTs, /similar incident/i);
    await waitForInputWait(h, sessionId);
    // One evidence figure: what `/triage status` shows is what the envelope says.
    const envelope = await h.deps.artifacts.getEnvelope(sessionId);
    const figure = Math.round((envelope?.evidence.completeness ?? -1) * 100);
    expect(statusView(await h.deps.store.sessions.getRequired(sessionId), new Date()).blocks).toContainEqual(
      expect.objectContaining({
        fields: expect.arrayContaining([expect.objectContaining({ text: `*Evidence*\n${figure}%` })]),
      }),
    );
    await waitForThread(h, threadTs, new RegExp(`\\*Evidence\\* ${figure}% \\(needs`));
    await chooseFirst(h, sessionId, 'b1');
    await waitForThread(h, threadTs, /Does this confirm/);
    await waitForInputWait(h, sessionId);
    await say(h, sessionId, 'confirmed', 'm1');
    await waitForThread(h, threadTs, /Remediation plan for review/);
    expect((await h.deps.store.sessions.getRequired(sessionId)).state).toBe('TESTING');

    // A reply while the plan waits for review is held, and acknowledged now by the Slack side.
    const slack = await createSlackDepsFromEnv(h.stack.env, {
      logger: new Logger({ serviceName: 'calmops-slack', logLevel: 'SILENT' }),
    });
    await slack.workflow.deliverInput({
      sessionId,
      userId: DEMO_IDS.requester,
      text: 'show me the logs',
      source: 'message',
      messageKey: 'held',
    });
    await waitForThread(h, threadTs, /Got your message; the remediation plan is waiting for review/);

    await decide(h, sessionId, 'plan-review', 'approve', DEMO_IDS.senior);
    await waitForThread(h, threadTs, /Approved remediation plan/);
    const resolving = await waitFor('RESOLVING', async () => {
      const s = await h.deps.store.sessions.getRequired(sessionId);
      return s.state === 'RESOLVING' ? s : undefined;
    });
    expect(resolving.state).toBe('RESOLVING');
    const entered = (await stateChanges(h, sessionId)).find((c) => c.hop === 'TESTING>RESOLVING');
    expect(entered?.reason).toMatch(/an approved remediation plan/);
    // The held reply is answered once the review is decided.
    await waitForThread(h, threadTs, /logs /);

    // Changes that are no step of the plan are refused and explained, one after the other, and never read as a
    // rush: the session stays in RESOLVING with its plan.
    for (const [n, offPlan] of [
      'kubectl delete pod not-in-the-plan-0',
      'kubectl scale deploy/not-in-the-plan --replicas=3',
    ].entries()) {
      await waitForInputWait(h, sessionId);
      await say(h, sessionId, offPlan, `off-plan-${n}`);
      await waitForThread(h, threadTs, new RegExp(`Not in the approved plan.*${offPlan.split(' ')[1]}`, 's'));
    }
    expect((await h.deps.store.sessions.getRequired(sessionId)).state).toBe('RESOLVING');

    // A person runs the approved plan's commands, one after the other, as fast as they can type.
    const workflow = await h.deps.artifacts.getWorkflow(sessionId);
    const plan = (await h.deps.artifacts.getPlan(sessionId, workflow?.approvedPlanId ?? ''))?.plan as
      | RemediationPlan
      | undefined;
    const commands = (plan?.steps ?? []).map((s) => s.command).filter((c) => /^(?:kubectl|oc) /.test(c));
    expect(commands.length).toBeGreaterThan(1);
    let key = 0;
    for (const command of commands) {
      await waitForInputWait(h, sessionId);
      const before = threadTexts(h, threadTs).length;
      await say(h, sessionId, command, `step-${++key}`);
      await waitFor('an answer to the plan step', async () => threadTexts(h, threadTs).length > before);
    }
    await waitForInputWait(h, sessionId);
    const texts = threadTexts(h, threadTs).join('\n');
    expect(texts).not.toMatch(/Hold on|A word of caution/);
    const timeline = await h.deps.store.timeline.list(sessionId);
    expect(timeline.filter((e) => e.type.startsWith('panic'))).toEqual([]);
    expect((await h.deps.store.sessions.getRequired(sessionId)).state).toBe('RESOLVING');
    expect(timeline.filter((e) => e.type === 'change.refused')).toHaveLength(2);
    const answered = timeline.filter((e) => e.type === 'change.answered');
    expect(answered.length).toBe(plan?.steps.filter((s) => s.mode === 'write').length);
    expect(answered.every((e) => e.data?.['matched'] === true && e.data?.['inOrder'] === true)).toBe(true);
  });
});
