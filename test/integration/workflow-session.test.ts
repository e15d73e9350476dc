import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverInput } from '../../src/workflow/deliver-input.js';
import {
  DEMO_IDS,
  decide,
  executionStatus,
  type Harness,
  openSession,
  startHarness,
  waitFor,
  waitForInputWait,
  waitForThread,
} from './workflow-harness.js';

describe('a diagnostic session from /triage to a stored incident', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  it('gathers, evaluates, tests a hypothesis, reviews a plan and stores the incident', async () => {
    const { sessionId, executionArn, threadTs } = await openSession(h);
    await waitForThread(h, threadTs, /Triage: pvc-binding in student03/);
    await waitForThread(h, threadTs, /similar incident/i);
    await waitForInputWait(h, sessionId);

    await deliverInput(h.deps, {
      sessionId,
      userId: DEMO_IDS.requester,
      text: 'kubectl get pvc',
      source: 'message',
      messageKey: 'm1',
    });
    await waitForThread(h, threadTs, /kubectl get pvc.*jupyter-data/s);

    await waitForInputWait(h, sessionId);
    const workflow = await h.deps.artifacts.getWorkflow(sessionId);
    const first = workflow?.hypotheses[0];
    expect(first?.code).toBe('PVC_NO_DEFAULT_STORAGECLASS');
    await deliverInput(h.deps, {
      sessionId,
      userId: DEMO_IDS.requester,
      text: `hypothesis ${first?.rank}`,
      source: 'button',
      action: { type: 'hypothesis', hypothesisId: first?.id ?? '' },
      messageKey: 'b1',
    });
    await waitForThread(h, threadTs, /Does this confirm/);
    expect((await h.deps.store.sessions.getRequired(sessionId)).state).toBe('TESTING');

    await waitForInputWait(h, sessionId);
    await deliverInput(h.deps, {
      sessionId,
      userId: DEMO_IDS.requester,
      text: 'confirmed',
      source: 'message',
      messageKey: 'm2',
    });
    await waitForThread(h, threadTs, /Remediation plan for review/);
    expect((await h.deps.store.sessions.getRequired(sessionId)).state).toBe('RESOLVING');
    await decide(h, sessionId, 'plan-review', 'approve', DEMO_IDS.senior);
    await waitForThread(h, threadTs, /Approved remediation plan/);
    await waitForThread(h, threadTs, /session_resolved/);

    await waitForInputWait(h, sessionId);
    await deliverInput(h.deps, {
      sessionId,
      userId: DEMO_IDS.requester,
      text: 'kubectl rollout restart deploy/jupyter',
      source: 'message',
      messageKey: 'm3',
    });
    await waitForThread(h, threadTs, /calmops does not run changes/);

    await waitForInputWait(h, sessionId);
    await deliverInput(h.deps, {
      sessionId,
      userId: DEMO_IDS.requester,
      text: 'resolved',
      source: 'button',
      action: { type: 'resolved' },
      messageKey: 'b2',
    });
    await waitFor('the execution to end', async () => (await executionStatus(h, executionArn)) === 'SUCCEEDED');
    const session = await h.deps.store.sessions.getRequired(sessionId);
    expect(session.status).toBe('resolved');
    const incident = await h.deps.memory.get(sessionId);
    expect(incident.rootCause.code).toBe('PVC_NO_DEFAULT_STORAGECLASS');
    const events = (await h.deps.store.timeline.list(sessionId)).map((e) => e.type);
    for (const type of [
      'intent_captured',
      'discovery_done',
      'plan_synthesis_start',
      'plan_synthesis_complete',
      'schema_guard_pass',
      'human_review_approved',
      'state.changed',
      'memory.stored',
    ]) {
      expect(events).toContain(type);
    }
  });
});
