import { DescribeExecutionCommand, StartExecutionCommand, StopExecutionCommand } from '@aws-sdk/client-sfn';
import { describe, expect, it } from 'vitest';
import { deliverInput } from '../../../src/workflow/deliver-input.js';
import { reconcile } from '../../../src/workflow/reconcile.js';
import { startedForSuite } from '../../support/suite-lifecycle.js';
import {
  DEMO_IDS,
  executionStatus,
  type Harness,
  openSession,
  startHarness,
  threadTexts,
  waitFor,
  waitForInputWait,
  waitForThread,
} from '../../support/workflow-harness.js';

/**
 * The production failures a crash cannot show locally, made with the real endpoint: an execution aborted while its
 * session waits, one the endpoint has never heard of, approvals whose task is gone, an override whose run was lost.
 * Each is repaired by the reconciler, the same step the schedule invokes every minute in AWS.
 */

async function consumed(h: Harness, sessionId: string): Promise<string[]> {
  return (await h.deps.store.timeline.list(sessionId))
    .filter((e) => e.type === 'input.consumed')
    .map((e) => String((e.data as { key?: string } | undefined)?.key ?? ''));
}

async function abortRun(h: Harness, sessionId: string): Promise<{ executionArn: string; token: string }> {
  const wait = await waitForInputWait(h, sessionId, 60_000);
  const session = await h.deps.store.sessions.getRequired(sessionId);
  const executionArn = session.executionArn ?? '';
  await h.stack.sfnClient.send(new StopExecutionCommand({ executionArn, error: 'Test.Aborted' }));
  await waitFor('the run to stop', async () => (await executionStatus(h, executionArn)) === 'ABORTED');
  return { executionArn, token: wait.token };
}

describe('the reconciler repairs what lost runs leave behind', () => {
  const h = startedForSuite(() => startHarness({ reconcileEverySeconds: 0 }), 120_000);

  it('resumes a session whose run was aborted while it waited, and hands over the input stranded in its inbox', async () => {
    const { sessionId, threadTs } = await openSession(h);
    const { executionArn } = await abortRun(h, sessionId);
    // A Slack function that died after the append and before the delivery.
    await h.deps.store.inbox.append(sessionId, {
      kind: 'message',
      userId: DEMO_IDS.requester,
      text: 'what is the storage class?',
      data: { messageKey: 'stranded-1' },
    });

    const report = await reconcile(h.deps);
    expect(report.resumed).toEqual([sessionId]);
    const session = await h.deps.store.sessions.getRequired(sessionId);
    expect(session.executionArn).not.toBe(executionArn);
    expect(session.resumeCount).toBe(1);
    // The new run's wait replaces the dead run's unclaimed one and takes the buffered message at once.
    await waitFor('the stranded input to be consumed', async () =>
      (await consumed(h, sessionId)).includes('stranded-1'),
    );
    await waitForThread(h, threadTs, /Picking this session up again/);
    await waitFor('the handled input to leave the inbox', async () =>
      (await h.deps.store.inbox.list(sessionId)).length === 0 ? true : undefined,
    );

    // Nothing left to repair: a second run changes nothing.
    const again = await reconcile(h.deps);
    expect(again.resumed).not.toContain(sessionId);
    expect((await h.deps.store.sessions.getRequired(sessionId)).resumeCount).toBe(1);
  }, 120_000);

  it('a thread message to a session whose run was aborted starts the next run instead of answering busy', async () => {
    const { sessionId } = await openSession(h);
    await abortRun(h, sessionId);
    const result = await deliverInput(h.deps, {
      sessionId,
      userId: DEMO_IDS.requester,
      text: 'still there?',
      source: 'message',
      messageKey: 'after-abort-1',
    });
    expect(result.outcome).toBe('resumed');
    await waitFor('the message to be consumed', async () => (await consumed(h, sessionId)).includes('after-abort-1'));
  }, 120_000);

  it('resumes a session whose execution the endpoint does not know (a lost run), once, however many reconcilers race', async () => {
    const { sessionId } = await openSession(h);
    await waitForInputWait(h, sessionId, 60_000);
    const lost = 'arn:aws:states:us-east-1:000000000000:execution:calmops-diagnostic:never-started-0';
    const session = await h.deps.store.sessions.getRequired(sessionId);
    const real = session.executionArn ?? '';
    await h.stack.sfnClient.send(new StopExecutionCommand({ executionArn: real }));
    await h.deps.store.sessions.update(sessionId, session.version, { executionArn: lost });

    const reports = await Promise.all([reconcile(h.deps), reconcile(h.deps), reconcile(h.deps)]);
    expect(reports.filter((r) => r.resumed.includes(sessionId))).toHaveLength(1);
    const resumed = await h.deps.store.sessions.getRequired(sessionId);
    expect(resumed.resumeCount).toBe(1);
    const described = await h.stack.sfnClient.send(
      new DescribeExecutionCommand({ executionArn: resumed.executionArn ?? '' }),
    );
    expect(described.status).toBe('RUNNING');
  }, 120_000);

  it('resumes a session whose execution failed outright (it never reached the thread to say so)', async () => {
    const { sessionId } = await openSession(h);
    await waitForInputWait(h, sessionId, 60_000);
    const session = await h.deps.store.sessions.getRequired(sessionId);
    await h.stack.sfnClient.send(new StopExecutionCommand({ executionArn: session.executionArn ?? '' }));
    // An execution of the same machine that fails: its input names no session, so even its failure notice fails.
    const failed = await h.stack.sfnClient.send(
      new StartExecutionCommand({
        stateMachineArn: h.stack.stateMachineArns.diagnostic,
        name: `broken-${sessionId}`,
        input: JSON.stringify({ resume: 0 }),
      }),
    );
    const failedArn = failed.executionArn ?? '';
    await waitFor('the execution to fail', async () => (await executionStatus(h, failedArn)) === 'FAILED');
    await h.deps.store.sessions.mutate(sessionId, () => ({ executionArn: failedArn }));
    const report = await reconcile(h.deps);
    expect(report.resumed).toContain(sessionId);
    expect((await h.deps.store.sessions.getRequired(sessionId)).executionArn).not.toBe(failedArn);
  }, 120_000);

  it('leaves a paused (idle) session alone until someone writes', async () => {
    const { sessionId } = await openSession(h);
    await abortRun(h, sessionId);
    // What the idle step leaves: no execution, on purpose.
    await h.deps.store.sessions.mutate(sessionId, () => ({ executionArn: null }));
    const report = await reconcile(h.deps);
    expect(report.resumed).not.toContain(sessionId);
    expect((await h.deps.store.sessions.getRequired(sessionId)).executionArn ?? null).toBeNull();
  }, 120_000);

  it('withdraws an approval whose task token is dead, tells the thread, and keeps a live one', async () => {
    const { sessionId, threadTs } = await openSession(h);
    const live = await waitForInputWait(h, sessionId, 60_000);
    const { token: dead } = await abortRun(h, sessionId);
    const later = new Date(Date.now() + 3_600_000);
    const base = { sessionId, allowedDeciders: [DEMO_IDS.engineer], requester: DEMO_IDS.requester, expiresAt: later };
    await h.deps.store.approvals.create({ ...base, id: `dead-${sessionId}`, kind: 'plan-review', token: dead });
    const report = await reconcile(h.deps);
    expect(report.approvalsWithdrawn).toEqual([`dead-${sessionId}`]);
    expect(report.resumed).toEqual([sessionId]);
    const fresh = await waitFor('the new run to wait', async () => {
      const wait = await h.deps.store.waits.get(sessionId);
      return wait && !wait.claimedAt && wait.token !== live.token ? wait : undefined;
    });
    await h.deps.store.approvals.create({ ...base, id: `live-${sessionId}`, kind: 'handoff', token: fresh.token });

    expect((await reconcile(h.deps)).approvalsWithdrawn).toEqual([]);
    expect((await h.deps.store.approvals.get(`dead-${sessionId}`))?.status).toBe('cancelled');
    expect((await h.deps.store.approvals.get(`live-${sessionId}`))?.status).toBe('pending');
    await waitForThread(h, threadTs, /plan review above lost its workflow run/);
    // A click on the withdrawn approval now says it was decided, instead of waking nothing.
    await expect(h.deps.store.approvals.decide(`dead-${sessionId}`, 'approved', DEMO_IDS.engineer)).rejects.toThrow(
      /cancelled/,
    );
  }, 120_000);

  it('revokes an override past its deadline whose run was lost, starts its mandatory review, and does it once', async () => {
    const { sessionId, threadTs } = await openSession(h);
    await waitForInputWait(h, sessionId, 60_000);
    const requestId = `bg-${sessionId.slice(-8)}`;
    const grantedAt = new Date(Date.now() - 20 * 60_000);
    const expiresAt = new Date(Date.now() - 5 * 60_000);
    await h.deps.artifacts.mutateWorkflow(sessionId, new Date(), (w) => ({
      ...w,
      override: {
        id: requestId,
        sessionId,
        skipToState: 'RESOLVING',
        previousState: 'GATHERING',
        requester: DEMO_IDS.requester,
        approver: DEMO_IDS.senior,
        justification: 'customer-facing outage, evidence pending',
        timeLimitMinutes: 15,
        grantedAt: grantedAt.toISOString(),
        expiresAt: expiresAt.toISOString(),
        reviewDueAt: new Date(Date.now() + 5 * 86_400_000).toISOString(),
      },
    }));
    await h.deps.store.sessions.mutate(sessionId, () => ({
      override: {
        state: 'RESOLVING',
        expiresAt: expiresAt.toISOString(),
        approver: DEMO_IDS.senior,
        grantedAt: grantedAt.toISOString(),
      },
    }));

    const [first, second] = await Promise.all([reconcile(h.deps), reconcile(h.deps)]);
    expect([...first.overridesRevoked, ...second.overridesRevoked]).toContain(sessionId);
    expect((await h.deps.store.sessions.getRequired(sessionId)).override ?? null).toBeNull();
    const workflow = await h.deps.artifacts.getWorkflow(sessionId);
    expect(workflow?.override?.revokedAt).toBeDefined();
    const review = await h.stack.sfnClient.send(
      new DescribeExecutionCommand({
        executionArn: `arn:aws:states:us-east-1:000000000000:execution:calmops-review:${requestId}-postmortem`,
      }),
    );
    expect(review.status).toBeDefined();
    await waitForThread(h, threadTs, /revoked/i);
    const revokedPosts = threadTexts(h, threadTs).filter((t) => /revoked/i.test(t));
    expect(revokedPosts).toHaveLength(1);
    const audits = (await h.deps.store.timeline.list(sessionId)).filter((e) => /revoked/.test(e.type));
    expect(audits).toHaveLength(1);
    expect((await reconcile(h.deps)).overridesRevoked).toEqual([]);
  }, 120_000);
});
