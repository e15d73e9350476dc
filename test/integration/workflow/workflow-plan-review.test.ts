import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { withDefaultStorageClassFix } from '../../../bench/support/workflow-fixed-cluster.js';
import { parseSnapshot } from '../../../src/cluster/snapshot.js';
import type { RemediationPlan } from '../../../src/review/plan.js';
import {
  clickResolved,
  DEMO_IDS,
  decide,
  executionStatus,
  fixture,
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

/**
 * The review machine with the real synthesizer: plans written with the cluster's names, the schema guard's one
 * guided regeneration, revisions made from the reviewer's note, and memory keeping what was run.
 */

async function plans(h: Harness, sessionId: string): Promise<{ revision: number; plan: RemediationPlan }[]> {
  const workflow = await h.deps.artifacts.getWorkflow(sessionId);
  const current = workflow?.currentPlanId
    ? await h.deps.artifacts.getPlan(sessionId, workflow.currentPlanId)
    : undefined;
  return current?.plan ? [{ revision: current.revision, plan: current.plan as unknown as RemediationPlan }] : [];
}

const commandsOf = (plan: RemediationPlan) => plan.steps.map((s) => `${s.command}\n${s.rollback ?? ''}`).join('\n');

describe('a remediation plan the guard refuses once', () => {
  // The claim's name is one kubectl would refuse: the first plan names it, the guard refuses it, and the one
  // regeneration the guard's errors guide writes a lookup instead.
  const bad = 'Jupyter_Data';
  const base = new URL('../../fixtures/snapshots/pvc-binding--no-default-storageclass.yaml', import.meta.url);
  const objects = parseSnapshot(readFileSync(base, 'utf8').replaceAll('jupyter-data', bad));
  const h = useHarness({ snapshot: { objects } });

  it('is regenerated exactly once with the guard’s errors, then goes to a human reviewer', async () => {
    const { sessionId, threadTs } = await openSession(h);
    await toPlanReview(h, sessionId, threadTs);
    const timeline = await h.deps.store.timeline.list(sessionId);
    const types = timeline.map((e) => e.type);
    expect(types.filter((t) => t === 'plan_synthesis_complete')).toHaveLength(2);
    expect(types.filter((t) => t === 'regeneration_attempt')).toHaveLength(1);
    const failed = timeline.find((e) => e.type === 'schema_guard_fail');
    expect(JSON.stringify(failed?.data)).toContain(`\\"${bad}\\" is not a valid Kubernetes name`);
    const regeneration = timeline.find((e) => e.type === 'regeneration_attempt');
    expect(JSON.stringify(regeneration?.data)).toContain(bad);
    expect(types.indexOf('schema_guard_pass')).toBeGreaterThan(types.indexOf('regeneration_attempt'));
    expect(types).not.toContain('human_needed');

    const [current] = await plans(h, sessionId);
    expect(current?.plan.steps.length).toBeGreaterThan(0);
    expect(commandsOf(current?.plan as RemediationPlan)).not.toContain(bad);
    // The human reviewer sees the plan, with what is left to look up.
    const posted = await waitForThread(h, threadTs, /Remediation plan for review/);
    expect(posted).toContain('approval_approve');
    expect(posted).toMatch(/names to look up first/);
  });
});

describe('reviewing and running a plan written with the cluster’s names', () => {
  const faulty = fixture('pvc-binding--no-default-storageclass');
  const h = useHarness({ snapshot: faulty, waitTimeScale: 0.05 });

  it('revises from the note, asks when the note is unclear, and remembers what was run', async () => {
    const { sessionId, executionArn, threadTs } = await openSession(h);
    await toPlanReview(h, sessionId, threadTs);
    const [original] = await plans(h, sessionId);
    expect(original?.revision).toBe(0);
    const plan0 = original?.plan as RemediationPlan;
    expect(commandsOf(plan0)).toContain('kubectl get pvc jupyter-data -n student03');
    expect(commandsOf(plan0)).not.toMatch(/\{\{|<pvc>|<deployment>/);

    // 1. A note the parser reads: the first step goes, and revision 1 says so.
    await requestPlanChanges(h, sessionId, DEMO_IDS.senior, 'Drop step 1, thanks', 'revision 1');
    const revised = await waitForThread(h, threadTs, /revision 1/);
    expect(revised).toContain(`Changes asked by <@${DEMO_IDS.senior}>`);
    expect(revised).toContain('dropped step 1 (kubectl get storageclass)');
    const [one] = await plans(h, sessionId);
    expect(one?.revision).toBe(1);
    expect(one?.plan.steps.map((s) => s.command)).toEqual(plan0.steps.slice(1).map((s) => s.command));

    // 2. A note it cannot read: revision 2 keeps the steps, records the note and asks about it.
    await requestPlanChanges(h, sessionId, DEMO_IDS.senior, 'Add a step that checks the PVC again', 'revision 2');
    const asked = await waitForThread(h, threadTs, /revision 2/);
    expect(asked).toMatch(
      /:question: <@[A-Z0-9]+>: I read .*Add a step that checks the PVC again.* as asking for another step/,
    );
    const [two] = await plans(h, sessionId);
    expect(two?.plan.revision).toMatchObject({ number: 2, note: 'Add a step that checks the PVC again', applied: [] });
    expect(two?.plan.steps.map((s) => s.command)).toEqual(one?.plan.steps.map((s) => s.command));
    const events = (await h.deps.store.timeline.list(sessionId)).filter((e) => e.type === 'plan_revised');
    expect(events.map((e) => e.data?.['revision'])).toEqual([1, 2]);

    // 3. Approved; the engineer runs the change with the class they chose, and it is validated and remembered.
    await decide(h, sessionId, 'plan-review', 'approve', DEMO_IDS.engineer);
    await waitForThread(h, threadTs, /Approved remediation plan/);
    await waitForInputWait(h, sessionId);
    await say(
      h,
      sessionId,
      'kubectl annotate storageclass gp2-legacy --overwrite storageclass.kubernetes.io/is-default-class=true',
      'ran-1',
    );
    await waitForThread(h, threadTs, /calmops does not run changes|not a step of the approved plan/);
    h.stack.kube?.setObjects(withDefaultStorageClassFix(faulty.objects));
    await waitForInputWait(h, sessionId);
    await clickResolved(h, sessionId, 'resolved-1');
    await waitForThread(h, threadTs, /Fix validated/);
    await waitFor('the execution to end', async () => (await executionStatus(h, executionArn)) === 'SUCCEEDED');
    const incident = await h.deps.memory.get(sessionId);
    expect(incident.resolutionSteps[0]).toMatchObject({
      command: 'kubectl annotate storageclass gp2-legacy --overwrite storageclass.kubernetes.io/is-default-class=true',
      description: expect.stringMatching(
        /Reported run; approved as step 1: kubectl annotate storageclass <storageclass>/,
      ),
    });
    expect(threadTexts(h, threadTs).some((t) => /step-\d/.test(t))).toBe(false);
  });
});
