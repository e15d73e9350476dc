import { beforeEach, describe, expect, it } from 'vitest';
import { withDefaultStorageClassFix } from '../../../bench/support/workflow-fixed-cluster.js';
import type { KubeObject } from '../../../src/cluster/types.js';
import { computeMetrics } from '../../../src/memory/metrics.js';
import {
  chooseHypothesis,
  clickResolved,
  DEMO_IDS,
  decide,
  executionStatus,
  fixture,
  openSession,
  say,
  threadTexts,
  useHarness,
  waitFor,
  waitForInputWait,
  waitForThread,
} from '../../support/workflow-harness.js';

const faulty = fixture('pvc-binding--no-default-storageclass');
const fixed: KubeObject[] = withDefaultStorageClassFix(faulty.objects);

describe('a diagnostic session from /triage to a stored incident', () => {
  const h = useHarness({ snapshot: faulty });
  beforeEach(() => {
    h.stack.kube?.setFaults([]);
    h.stack.kube?.setObjects(faulty.objects, faulty.logs);
  });

  /** The session's fix validations, oldest first, as the first-time-fix metric reads them. */
  async function validations(sessionId: string) {
    return (await h.deps.store.timeline.list(sessionId))
      .filter((e) => e.type === 'fix.validated')
      .map((e) => ({ passed: e.data?.['passed'], summary: e.summary ?? '' }));
  }

  it('gathers, evaluates, tests a hypothesis, reviews a plan and stores the incident', async () => {
    const { sessionId, executionArn, threadTs } = await openSession(h);
    await waitForThread(h, threadTs, /Triage: pvc-binding in student03/);
    await waitForThread(h, threadTs, /similar incident/i);
    await waitForInputWait(h, sessionId);

    await say(h, sessionId, 'kubectl get pvc', 'm1');
    await waitForThread(h, threadTs, /kubectl get pvc.*jupyter-data/s);

    await waitForInputWait(h, sessionId);
    const workflow = await h.deps.artifacts.getWorkflow(sessionId);
    const first = workflow?.hypotheses[0];
    expect(first?.code).toBe('PVC_NO_DEFAULT_STORAGECLASS');
    await chooseHypothesis(h, sessionId, first?.id ?? '', `hypothesis ${first?.rank}`, 'b1');
    await waitForThread(h, threadTs, /Does this confirm/);
    expect((await h.deps.store.sessions.getRequired(sessionId)).state).toBe('TESTING');

    await waitForInputWait(h, sessionId);
    await say(h, sessionId, 'confirmed', 'm2');
    await waitForThread(h, threadTs, /Remediation plan for review/);
    // RESOLVING only once a reviewer approved the plan.
    expect((await h.deps.store.sessions.getRequired(sessionId)).state).toBe('TESTING');
    await decide(h, sessionId, 'plan-review', 'approve', DEMO_IDS.senior);
    await waitForThread(h, threadTs, /Approved remediation plan/);
    expect((await h.deps.store.sessions.getRequired(sessionId)).state).toBe('RESOLVING');
    await waitForThread(h, threadTs, /session_resolved/);

    await waitForInputWait(h, sessionId);
    await say(h, sessionId, 'kubectl rollout restart deploy/jupyter', 'm3');
    await waitForThread(h, threadTs, /calmops does not run changes/);

    // Someone ran the plan: the cluster now has a default StorageClass and the claim is bound.
    h.stack.kube?.setObjects(fixed);
    await waitForInputWait(h, sessionId);
    await clickResolved(h, sessionId, 'b2');
    await waitForThread(
      h,
      threadTs,
      /:white_check_mark: Fix validated: PVC_NO_DEFAULT_STORAGECLASS on PersistentVolumeClaim student03\/jupyter-data no longer seen/,
    );
    await waitFor('the execution to end', async () => (await executionStatus(h, executionArn)) === 'SUCCEEDED');
    const session = await h.deps.store.sessions.getRequired(sessionId);
    expect(session.status).toBe('resolved');
    const incident = await h.deps.memory.get(sessionId);
    expect(incident.rootCause.code).toBe('PVC_NO_DEFAULT_STORAGECLASS');
    expect(incident.validation).toMatchObject({ passed: true, attempts: 1 });
    expect(incident.validation?.reason).toMatch(/no longer shows PVC_NO_DEFAULT_STORAGECLASS/);
    // The fix was validated against the original fault, not against what the fixed cluster looks like.
    expect(incident.symptoms.join('\n')).toMatch(/PVC_NO_DEFAULT_STORAGECLASS/);
    const timeline = await h.deps.store.timeline.list(sessionId);
    const events = timeline.map((e) => e.type);
    for (const type of [
      'intent_captured',
      'discovery_done',
      'plan_synthesis_start',
      'plan_synthesis_complete',
      'schema_guard_pass',
      'human_review_approved',
      'state.changed',
      'fix.validated',
      'memory.stored',
    ]) {
      expect(events).toContain(type);
    }
    const reentry = timeline.find((e) => e.type === 'state.changed' && e.data?.['from'] === 'RESOLVING');
    expect(reentry?.data).toMatchObject({ to: 'GATHERING', cause: 'validation' });
    expect(reentry?.summary).toMatch(/validating the fix/);
    // Validated before it was stored, and stored before the session closed.
    const order = ['fix.validated', 'memory.stored', 'session.closed'].map((t) => events.indexOf(t));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(await validations(sessionId)).toEqual([{ passed: true, summary: expect.stringMatching(/passed/) }]);
  });

  it('keeps the session open while the fault is still there or cannot be seen, and validates a later fix', async () => {
    const { sessionId, executionArn, threadTs } = await openSession(h);
    await waitForInputWait(h, sessionId);
    const resolved = async (key: string) => {
      await waitForInputWait(h, sessionId);
      await clickResolved(h, sessionId, key);
    };

    // 1. Nothing changed in the cluster: the claim is still pending.
    await resolved('r1');
    const notValidated = await waitForThread(h, threadTs, /Fix not validated: PVC_NO_DEFAULT_STORAGECLASS/);
    expect(notValidated).toMatch(/PersistentVolumeClaim student03\/jupyter-data is still there/);
    // The finding's own evidence, so nobody has to go and look for it.
    expect(notValidated).toMatch(/no storage class is set|no default StorageClass|storageClassName/i);
    expect(notValidated).toContain('session_resolved');
    await waitForInputWait(h, sessionId);
    let session = await h.deps.store.sessions.getRequired(sessionId);
    expect(session.status).toBe('open');
    expect(session.state).toBe('ANALYZING');
    expect(await executionStatus(h, executionArn)).toBe('RUNNING');
    expect(await validations(sessionId)).toEqual([
      { passed: false, summary: expect.stringMatching(/Validation failed: PVC_NO_DEFAULT_STORAGECLASS/) },
    ]);
    await expect(h.deps.memory.get(sessionId)).rejects.toThrow(/not in operational memory/);

    // 2. Fixed, but the claims cannot be read: the fault's absence proves nothing, so the fix does not pass.
    h.stack.kube?.setObjects(fixed);
    h.stack.kube?.setFaults([
      { match: { resource: 'persistentvolumeclaims' }, effect: { type: 'status', status: 403 } },
    ]);
    await resolved('r2');
    await waitForThread(h, threadTs, /Fix not validated: evidence incomplete/);
    await waitForInputWait(h, sessionId);
    session = await h.deps.store.sessions.getRequired(sessionId);
    expect(session).toMatchObject({ status: 'open', state: 'GATHERING' });
    expect((await validations(sessionId)).map((v) => v.passed)).toEqual([false, false]);

    // 3. Readable and fixed: a second "resolved" after the fix validates it against the confirmed fault.
    h.stack.kube?.setFaults([]);
    await resolved('r3');
    await waitForThread(h, threadTs, /Fix validated: PVC_NO_DEFAULT_STORAGECLASS on PersistentVolumeClaim/);
    await waitFor('the execution to end', async () => (await executionStatus(h, executionArn)) === 'SUCCEEDED');
    session = await h.deps.store.sessions.getRequired(sessionId);
    expect(session.status).toBe('resolved');
    const incident = await h.deps.memory.get(sessionId);
    expect(incident.validation).toMatchObject({ passed: true, attempts: 3 });
    expect((await validations(sessionId)).map((v) => v.passed)).toEqual([false, false, true]);
    expect(threadTexts(h, threadTs).filter((t) => /Validating the fix/.test(t))).toHaveLength(3);

    // The first-time-fix metric counts this session as fixed, but not the first time.
    const metrics = computeMetrics({
      sessions: [],
      events: (await h.deps.store.timeline.list(sessionId)).map((e) => ({ ...e, sessionId })),
    });
    expect(metrics.firstTimeFix).toMatchObject({ validatedSessions: 1, passedFirstTime: 0 });
  });
});
