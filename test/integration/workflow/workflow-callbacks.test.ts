import { describe, expect, it } from 'vitest';
import { BREAK_GLASS_LIMITS } from '../../../src/diagnosis/break-glass.js';
import { ApprovalAlreadyDecidedError, ApprovalNotAllowedError } from '../../../src/store/errors.js';
import { deliverInput } from '../../../src/workflow/deliver-input.js';
import {
  DEMO_IDS,
  decide,
  executionStatus,
  type Harness,
  openSession,
  requestPlanChanges,
  say,
  threadTexts,
  toPlanReview,
  useHarness,
  waitFor,
  waitForInputWait,
  waitForThread,
} from '../../support/workflow-harness.js';

/** A break-glass form the rules accept: a senior approver, a short time limit and what is at stake. */
const PAYMENTS_OUTAGE_REQUEST = {
  justification: 'Payments are failing for all users since the storage outage began',
  approverUserId: DEMO_IDS.senior,
  targetState: 'TESTING',
  timeLimitMinutes: 5,
};

/** Stores a break-glass request as the Slack modal does, then sends the requester's button that asks for it. */
async function requestBreakGlass(
  h: Harness,
  sessionId: string,
  request: { id: string; expiresInMs: number; data: Record<string, unknown>; text: string; messageKey: string },
) {
  await h.deps.store.approvals.create({
    id: request.id,
    kind: 'break-glass',
    sessionId,
    allowedDeciders: [DEMO_IDS.senior],
    requester: DEMO_IDS.requester,
    expiresAt: new Date(Date.now() + request.expiresInMs),
    data: request.data,
  });
  await deliverInput(h.deps, {
    sessionId,
    userId: DEMO_IDS.requester,
    text: request.text,
    source: 'button',
    action: { type: 'break-glass', requestId: request.id },
    messageKey: request.messageKey,
  });
}

describe('callbacks answered by people', () => {
  const h = useHarness({ waitTimeScale: 0.05 });

  it('runs only the approved specialist and posts the findings report; a denied handoff runs nothing', async () => {
    const { sessionId, threadTs } = await openSession(h);
    await say(h, sessionId, 'ask the compute specialist', 'a1');
    // Who asked is a working mention, never the escaped `&lt;@U…&gt;`.
    const proposal = await waitForThread(h, threadTs, /Shall I consult the Compute specialist/);
    expect(proposal).toContain(`<@${DEMO_IDS.requester}> asked for the compute specialist`);
    expect(proposal).not.toContain('&lt;@');
    await decide(h, sessionId, 'handoff', 'deny', DEMO_IDS.requester);
    await waitForThread(h, threadTs, /not consulting the Compute specialist/);
    await waitForInputWait(h, sessionId);
    await say(h, sessionId, 'ask the storage specialist', 'a2');
    await waitFor('a second handoff', async () => {
      const p = await h.deps.artifacts.getPending(sessionId, 'handoff');
      const first = (await h.deps.store.timeline.list(sessionId)).filter((e) => e.type === 'approval.requested').length;
      return first >= 2 ? p : undefined;
    });
    const pending = await h.deps.artifacts.getPending(sessionId, 'handoff');
    await decide(h, sessionId, 'handoff', 'approve', DEMO_IDS.requester, undefined, pending?.approvalId);
    await waitForThread(h, threadTs, /Findings report/);
    const events = await h.deps.store.timeline.list(sessionId);
    expect(events.filter((e) => e.type === 'handoff.completed').map((e) => e.data?.['domain'])).toEqual(['storage']);
    expect(events.some((e) => e.type === 'handoff.denied' && e.data?.['domain'] === 'compute')).toBe(true);
    expect((await h.deps.store.sessions.getRequired(sessionId)).handoffCount).toBe(1);
  });

  it('answers reads and questions while a proposal is open, holds only a change, and keeps the first decision', async () => {
    const { sessionId, threadTs } = await openSession(h);
    await say(h, sessionId, 'ask the compute specialist', 'd1');
    await waitForThread(h, threadTs, /Shall I consult the Compute specialist/);
    // The proposal does not block the thread: a read is answered at once, and asking again points at the buttons.
    await say(h, sessionId, 'kubectl get pods', 'd2');
    await waitForThread(h, threadTs, /kubectl get pods/);
    await say(h, sessionId, 'Ask the compute specialist to review the pods', 'd3');
    await waitForThread(h, threadTs, /already proposed above/);
    await say(h, sessionId, 'kubectl rollout restart deployment/web', 'd4');
    await waitForThread(h, threadTs, /That change waits until the compute specialist proposal above is answered/);
    const decided = await decide(h, sessionId, 'handoff', 'deny', DEMO_IDS.requester);
    await expect(h.deps.store.approvals.decide(decided.id, 'approved', DEMO_IDS.senior)).rejects.toBeInstanceOf(
      ApprovalAlreadyDecidedError,
    );
    await waitForThread(h, threadTs, /not consulting/);
    // The held change is answered after the decision, as a change in this state is.
    await waitForThread(h, threadTs, /Changes are not available yet|Hold on/);
    const completed = (await h.deps.store.timeline.list(sessionId)).filter((e) => e.type === 'handoff.completed');
    expect(completed).toHaveLength(0);
  });

  it('loops the review with a revision, then approves the revised plan', async () => {
    const { sessionId, threadTs } = await openSession(h);
    await toPlanReview(h, sessionId, threadTs);
    await requestPlanChanges(h, sessionId, DEMO_IDS.senior, 'Add a step that checks the PVC again', 'a revised plan');
    await waitForThread(h, threadTs, /revision 1/);
    await decide(h, sessionId, 'plan-review', 'approve', DEMO_IDS.engineer);
    await waitForThread(h, threadTs, /Approved remediation plan/);
    const types = (await h.deps.store.timeline.list(sessionId)).map((e) => e.type);
    // The revision is made from the reviewed plan and the note, not synthesized again.
    expect(types.filter((t) => t === 'plan_synthesis_start')).toHaveLength(1);
    expect(types.filter((t) => t === 'plan_revised')).toHaveLength(1);
    expect(types).toContain('human_review_changes_requested');
    expect(types).toContain('human_review_approved');
  });

  it('grants a break-glass override, revokes it automatically and asks for the post-incident review', async () => {
    const { sessionId, threadTs } = await openSession(h);
    await waitForInputWait(h, sessionId);
    const requestId = `bg-${sessionId.slice(-8)}`;
    await requestBreakGlass(h, sessionId, {
      id: requestId,
      expiresInMs: 3_600_000,
      data: {
        justification: 'Checkout is down for every customer and the storage vendor is unreachable',
        approverUserId: DEMO_IDS.senior,
        targetState: 'RESOLVING',
        timeLimitMinutes: 1,
        requester: DEMO_IDS.requester,
        change: 'kubectl rollout restart deployment/web -n student03',
      },
      text: 'break-glass',
      messageKey: 'bg',
    });
    await waitForThread(h, threadTs, /BREAK-GLASS REQUESTED/);
    await decide(h, sessionId, 'break-glass', 'approve', DEMO_IDS.senior, undefined, requestId);
    await waitForThread(h, threadTs, /Override granted/);
    expect((await h.deps.store.sessions.getRequired(sessionId)).override?.state).toBe('RESOLVING');
    // The change the override was granted for is unlocked, with no plan; another change is not.
    await say(h, sessionId, 'restart the deployment web', 'bg-change');
    await waitForThread(h, threadTs, /Allowed under the break-glass override .* for this change only/s);
    await say(h, sessionId, 'kubectl delete pod web-1 -n student03', 'bg-other');
    await waitForThread(h, threadTs, /is for `kubectl rollout restart deployment\/web -n student03` only/);
    expect(threadTexts(h, threadTs).join('\n')).not.toMatch(/There is no approved plan yet/);
    await waitForThread(h, threadTs, /override ended/, 30_000);
    expect((await h.deps.store.sessions.getRequired(sessionId)).override).toBeUndefined();
    await waitForThread(h, threadTs, /Post-incident review/);
    // The review checks the override, so its requester may not sign it off; it is due when the form said.
    const review = await waitFor('the review approval', () => h.deps.artifacts.getPending(sessionId, 'postmortem'));
    const approval = await h.deps.store.approvals.get(review.approvalId);
    expect(approval?.allowedDeciders).not.toContain(DEMO_IDS.requester);
    expect(approval?.allowedDeciders.length).toBeGreaterThan(0);
    const dueInDays = (Date.parse(approval?.expiresAt ?? '') - Date.now()) / 86_400_000;
    expect(Math.round(dueInDays)).toBe(BREAK_GLASS_LIMITS.reviewDueDays);
    await expect(
      h.deps.store.approvals.decide(review.approvalId, 'approved', DEMO_IDS.requester),
    ).rejects.toBeInstanceOf(ApprovalNotAllowedError);
    // The audit shows the people as mentions, who asked once, and the commands asked for under the override.
    const audit = await waitForThread(h, threadTs, /Post-incident review/);
    expect(audit).toContain(`requested by <@${DEMO_IDS.requester}>`);
    expect(audit).toMatch(/asked for `restart the deployment web` under the override: allowed/);
    expect(audit).toMatch(/asked for `kubectl delete pod web-1 -n student03` under the override: refused/);
    expect(audit).not.toContain('&lt;@');
    expect(audit.match(/requested by/g)?.length).toBe(1);
    await decide(h, sessionId, 'postmortem', 'approve', DEMO_IDS.senior);
    await waitFor('the review to complete', async () =>
      (await h.deps.store.timeline.list(sessionId)).some((e) => e.type === 'break-glass.review-completed'),
    );
    const types = (await h.deps.store.timeline.list(sessionId)).map((e) => e.type);
    for (const t of ['break-glass.requested', 'break-glass.granted', 'break-glass.revoked']) expect(types).toContain(t);
  });

  it('refuses a break-glass request the rules reject, and records the denial of a valid one', async () => {
    const { sessionId, threadTs } = await openSession(h);
    await requestBreakGlass(h, sessionId, {
      id: `bad-${sessionId.slice(-8)}`,
      expiresInMs: 3_600_000,
      data: {
        justification: 'pls',
        approverUserId: DEMO_IDS.requester,
        targetState: 'RESOLVING',
        timeLimitMinutes: 90,
      },
      text: 'bg',
      messageKey: 'bad',
    });
    await waitForThread(h, threadTs, /Break-glass request refused/);
    const id = `deny-${sessionId.slice(-8)}`;
    await requestBreakGlass(h, sessionId, {
      id,
      expiresInMs: 3_600_000,
      data: PAYMENTS_OUTAGE_REQUEST,
      text: 'bg',
      messageKey: 'deny',
    });
    await decide(h, sessionId, 'break-glass', 'deny', DEMO_IDS.senior, undefined, id);
    await waitForThread(h, threadTs, /Break-glass denied/);
    expect((await h.deps.store.sessions.getRequired(sessionId)).override).toBeUndefined();
  });
});

describe('callbacks nobody answers', () => {
  const h = useHarness({ approvalTimeoutSeconds: 2, idleTimeoutSeconds: 6 });

  it('lets an unanswered handoff proposal lapse at the next input, counts it, and refuses a late click', async () => {
    const { sessionId, threadTs } = await openSession(h);
    await say(h, sessionId, 'ask the compute specialist', 't1');
    const pending = await waitFor('the handoff approval', () => h.deps.artifacts.getPending(sessionId, 'handoff'));
    await waitFor('the proposal to run out', async () => {
      const expiresAt = (await h.deps.store.approvals.get(pending.approvalId))?.expiresAt ?? '';
      return expiresAt < new Date().toISOString() ? true : undefined;
    });
    await waitForInputWait(h, sessionId);
    await say(h, sessionId, 'kubectl get pods', 't2');
    await waitForThread(h, threadTs, /Nobody answered the handoff/, 15_000);
    expect(h.expired).toContain('handoff');
    const approval = await h.deps.store.approvals.get(pending.approvalId);
    expect(approval?.status).toBe('expired');
    await expect(
      h.deps.store.approvals.decide(pending.approvalId, 'approved', DEMO_IDS.requester, new Date()),
    ).rejects.toBeTruthy();
  });

  it('expires a plan review', async () => {
    const { sessionId, threadTs } = await openSession(h);
    await toPlanReview(h, sessionId, threadTs);
    await waitForThread(h, threadTs, /Nobody reviewed the plan in time/, 15_000);
    expect(h.expired).toContain('plan-review');
  });

  it('expires a senior approval', async () => {
    const { sessionId, threadTs } = await openSession(h);
    const id = `exp-${sessionId.slice(-8)}`;
    await requestBreakGlass(h, sessionId, {
      id,
      expiresInMs: 60_000,
      data: PAYMENTS_OUTAGE_REQUEST,
      text: 'bg',
      messageKey: 'exp',
    });
    await waitForThread(h, threadTs, /Break-glass request expired/, 15_000);
    expect(h.expired).toContain('break-glass');
  });

  it('pauses an idle session and resumes it in a new execution when a message arrives', async () => {
    const { sessionId, threadTs, executionArn } = await openSession(h);
    await waitForThread(h, threadTs, /pausing this session/, 20_000);
    await waitFor('the first execution to end', async () => (await executionStatus(h, executionArn)) === 'SUCCEEDED');
    expect((await h.deps.store.sessions.getRequired(sessionId)).executionArn).toBeUndefined();
    const result = await say(h, sessionId, 'kubectl get pvc', 'r1');
    expect(result.outcome).toBe('resumed');
    await waitForThread(h, threadTs, /Picking this session up again/);
    await waitForThread(h, threadTs, /kubectl get pvc.*jupyter-data/s);
    const session = await h.deps.store.sessions.getRequired(sessionId);
    expect(session.resumeCount).toBe(1);
    expect(session.executionArn).toMatch(new RegExp(`${sessionId}-1$`));
  });
});
