import { describe, expect, it } from 'vitest';
import { messageBlockProblems } from '../../../local/slack/block-rules.js';
import { classifyRequest } from '../../../src/diagnosis/commands/index.js';
import type { WorkflowSnapshot } from '../../../src/diagnosis/evidence.js';
import { evidenceFromEnvelope, evidenceFromResolved } from '../../../src/diagnosis/evidence-sources.js';
import { isStillPresent } from '../../../src/diagnosis/fix-validation.js';
import { type TransitionResult, validationOutcome } from '../../../src/diagnosis/transitions.js';
import { incidentFromResolution } from '../../../src/store/memory.js';
import { fixValidationView } from '../../../src/views/validation.js';
import { WORKFLOW_STEPS } from '../../../src/workflow/dispatch.js';
import {
  advanceWith,
  at,
  confirmedRootCauseEvidence,
  envelope,
  finding,
  pvcIncidentFindings,
} from '../../support/diagnosis-fixtures.js';

const PVC = { kind: 'PersistentVolumeClaim', name: 'data-db-0', namespace: 'payments' };

/** A session whose root cause PVC_PENDING (on data-db-0) was confirmed and which reported the fix at `at(60)`. */
function validating(): WorkflowSnapshot {
  const resolving: WorkflowSnapshot = {
    state: 'RESOLVING',
    stateEnteredAt: at(50),
    evidence: confirmedRootCauseEvidence(),
  };
  const result = advanceWith(resolving, evidenceFromResolved(classifyRequest('resolved'), at(60)), at(60));
  expect(result.snapshot).toMatchObject({ state: 'GATHERING' });
  return result.snapshot;
}

const kinds = (steps: TransitionResult[]) => steps.map((s) => (s.kind === 'transition' ? `${s.from}>${s.to}` : s.kind));

describe('fix validation rules', () => {
  it('re-enters GATHERING to validate the confirmed root cause on its resource', () => {
    const snapshot = validating();
    expect(snapshot.validation).toEqual({
      startedAt: at(60),
      codes: ['PVC_PENDING'],
      targets: [{ code: 'PVC_PENDING', resource: PVC }],
    });
  });

  it('passes when the root cause is gone, even if other faults or a low-severity echo remain', () => {
    const fresh = envelope({
      findings: [
        finding({ code: 'PVC_PENDING', resource: PVC, severity: 'low' }),
        finding({ code: 'PVC_PENDING', resource: { ...PVC, name: 'data-db-1' }, severity: 'high' }),
        finding({ code: 'CRASH_LOOP', resource: { kind: 'Pod', name: 'api', namespace: 'payments' } }),
      ],
    });
    const result = advanceWith(validating(), evidenceFromEnvelope(fresh, at(70)), at(70));
    expect(kinds(result.steps)).toEqual(['validated']);
    expect(result.steps[0]?.reason).toContain('PVC_PENDING on PersistentVolumeClaim payments/data-db-0');
    expect(result.snapshot.validation).toBeNull();
    expect(validationOutcome(result.steps[0] as TransitionResult)).toMatchObject({ passed: true });
  });

  it('fails while the fault shows on a new pod of the entity the root cause names', () => {
    // The confirmed cause names the Deployment; the pods that showed it are replaced by every rollout.
    const deployment = { kind: 'Deployment', name: 'api', namespace: 'payments' };
    const finding0 = finding({
      code: 'PVC_PENDING',
      resource: { kind: 'Pod', name: 'api-7d9f-a1b2c', namespace: 'payments' },
    });
    const env = envelope({
      findings: [{ ...finding0, owner: deployment }],
      rootCause: [{ rank: 1, code: 'PVC_PENDING', summary: 's', confidence: 0.9, resource: deployment }],
    });
    const resolving: WorkflowSnapshot = {
      state: 'RESOLVING',
      stateEnteredAt: at(50),
      evidence: confirmedRootCauseEvidence(env),
    };
    const validatingDeployment = advanceWith(
      resolving,
      evidenceFromResolved(classifyRequest('resolved'), at(60)),
      at(60),
    );
    const replaced = { ...finding0, resource: { ...finding0.resource, name: 'api-5c6d-x9y8z' }, owner: deployment };
    const fresh = envelope({ findings: [replaced] });
    const result = advanceWith(validatingDeployment.snapshot, evidenceFromEnvelope(fresh, at(70)), at(70));
    expect(kinds(result.steps)).toEqual(['GATHERING>ANALYZING']);
    expect(result.steps[0]).toMatchObject({ fixValidation: 'failed' });
  });

  it('fails while the root cause is still there at medium severity or worse, and starts a new cycle', () => {
    const fresh = envelope({ findings: [finding({ code: 'PVC_PENDING', resource: PVC, severity: 'medium' })] });
    const result = advanceWith(validating(), evidenceFromEnvelope(fresh, at(70)), at(70));
    expect(kinds(result.steps)).toEqual(['GATHERING>ANALYZING']);
    expect(result.steps[0]).toMatchObject({ cause: 'validation', fixValidation: 'failed' });
    expect(result.snapshot.cycleStartedAt).toBe(at(70));
    expect(validationOutcome(result.steps[0] as TransitionResult)).toMatchObject({ passed: false });
  });

  it('never passes on a triage that read too little, and judges the fix again on the next triage', () => {
    const thin = envelope({
      findings: [],
      rootCause: [],
      evidence: { completeness: 0.5, threshold: 0.8, present: ['pods'], missing: ['pvcs'], gaps: [] },
    });
    let result = advanceWith(validating(), evidenceFromEnvelope(thin, at(70)), at(70));
    expect(result.steps).toEqual([
      expect.objectContaining({
        kind: 'validation-incomplete',
        reason: expect.stringMatching(/^Not validated: evidence incomplete/),
      }),
    ]);
    expect(result.snapshot.state).toBe('GATHERING');
    expect(result.snapshot.validation?.startedAt).toBe(at(70));
    expect(validationOutcome(result.steps[0] as TransitionResult)).toMatchObject({ passed: false });

    // Another "resolved" changes nothing by itself; the next full triage decides.
    result = advanceWith(result.snapshot, evidenceFromResolved(classifyRequest('resolved'), at(80)), at(80));
    expect(result.steps).toEqual([]);
    const full = envelope({ findings: [], rootCause: [] });
    result = advanceWith(result.snapshot, evidenceFromEnvelope(full, at(90)), at(90));
    expect(kinds(result.steps)).toEqual(['validated']);
  });

  it('validates a second fix against the root cause confirmed before the failed attempt', () => {
    const failed = advanceWith(
      validating(),
      evidenceFromEnvelope(envelope({ findings: pvcIncidentFindings() }), at(70)),
      at(70),
    ).snapshot;
    expect(failed.state).toBe('ANALYZING');
    const again = advanceWith(failed, evidenceFromResolved(classifyRequest('resolved'), at(80)), at(80));
    expect(again.steps[0]).toMatchObject({ from: 'ANALYZING', to: 'GATHERING', cause: 'validation' });
    expect(again.snapshot.validation?.targets).toEqual([{ code: 'PVC_PENDING', resource: PVC }]);
    // The pod still crashes for an unrelated reason; the claim is fixed.
    const fresh = envelope({ findings: [pvcIncidentFindings()[2]].filter((f) => f !== undefined) });
    const result = advanceWith(again.snapshot, evidenceFromEnvelope(fresh, at(90)), at(90));
    expect(kinds(result.steps)).toEqual(['validated']);
  });

  it('validates a fix reported from any state, the original symptoms standing in for an unconfirmed cause', () => {
    const testing: WorkflowSnapshot = {
      state: 'TESTING',
      stateEnteredAt: at(5),
      evidence: evidenceFromEnvelope(envelope(), at(1)),
    };
    const result = advanceWith(
      testing,
      evidenceFromResolved(classifyRequest('it works now, resolved'), at(10)),
      at(10),
    );
    expect(result.steps[0]).toMatchObject({ from: 'TESTING', to: 'GATHERING', cause: 'validation' });
    expect(result.steps[0]?.reason).toMatch(/validating the fix/);
    expect(result.snapshot.validation?.codes.sort()).toEqual(['CRASH_LOOP', 'POD_UNSCHEDULABLE', 'PVC_PENDING']);

    const gathering: WorkflowSnapshot = { state: 'GATHERING', stateEnteredAt: at(0), evidence: [] };
    const early = advanceWith(gathering, evidenceFromResolved(classifyRequest('resolved'), at(3)), at(3));
    expect(kinds(early.steps)).toEqual(['GATHERING>GATHERING']);
    expect(early.snapshot.validation).toMatchObject({ startedAt: at(3), codes: [] });
  });

  it('matches findings by code, resource and severity; records without a severity count', () => {
    const targets = [{ code: 'PVC_PENDING', resource: { kind: 'pvc', name: 'data-db-0' } }];
    expect(isStillPresent(targets, { code: 'PVC_PENDING', resource: PVC, severity: 'critical' })).toBe(true);
    expect(isStillPresent(targets, { code: 'PVC_PENDING', resource: PVC })).toBe(true);
    expect(isStillPresent(targets, { code: 'PVC_PENDING', resource: PVC, severity: 'info' })).toBe(false);
    expect(isStillPresent(targets, { code: 'PVC_PENDING', resource: { ...PVC, namespace: 'other' } })).toBe(true);
    expect(isStillPresent(targets, { code: 'PVC_PENDING', resource: { ...PVC, name: 'x' } })).toBe(false);
    expect(isStillPresent(targets, { code: 'POD_UNSCHEDULABLE', resource: PVC })).toBe(false);
    expect(isStillPresent([{ code: 'PVC_PENDING' }], { code: 'PVC_PENDING', resource: { ...PVC, name: 'x' } })).toBe(
      true,
    );
  });
});

describe('fix validation in the thread and in memory', () => {
  const base = {
    sessionId: 'S1',
    targets: ['PVC_PENDING on PersistentVolumeClaim payments/data-db-0'],
    findings: 0,
    completeness: 1,
    threshold: 0.8,
    gaps: [],
    attempt: 1,
  };

  it('says what was validated, what is still there with its evidence, and what could not be read', () => {
    const ok = fixValidationView({ ...base, outcome: 'validated', stillPresent: [], state: 'GATHERING' });
    expect(ok.blocks[0]).toMatchObject({
      text: {
        text: ':white_check_mark: Fix validated: PVC_PENDING on PersistentVolumeClaim payments/data-db-0 no longer seen',
      },
    });
    const still = fixValidationView({
      ...base,
      outcome: 'still-present',
      state: 'ANALYZING',
      findings: 1,
      stillPresent: [
        {
          code: 'PVC_PENDING',
          severity: 'critical',
          where: 'PersistentVolumeClaim payments/data-db-0',
          message: 'PVC data-db-0 is Pending <again>',
          evidence: ['ProvisioningFailed: storageclass "fast-ssd" not found', 'x'.repeat(5000)],
        },
      ],
    });
    const stillText = JSON.stringify(still.blocks);
    expect(still.text).toBe(
      'Fix not validated: PVC_PENDING on PersistentVolumeClaim payments/data-db-0 is still there',
    );
    expect(stillText).toContain('ProvisioningFailed');
    expect(stillText).toContain('&lt;again&gt;');
    expect(stillText).toContain('session_resolved');
    expect(stillText).toContain('ANALYZING');
    const thin = fixValidationView({
      ...base,
      outcome: 'incomplete',
      stillPresent: [],
      state: 'GATHERING',
      completeness: 0.5,
      gaps: ['pvcs: forbidden (RBAC)'],
    });
    expect(thin.text).toBe('Fix not validated: evidence incomplete');
    expect(JSON.stringify(thin.blocks)).toContain('pvcs: forbidden (RBAC)');
    for (const m of [ok, still, thin]) expect(messageBlockProblems(m.blocks)).toEqual([]);
  });

  it('keeps the validation result with the stored incident', () => {
    const incident = incidentFromResolution({
      envelope: envelope(),
      rootCause: { code: 'PVC_PENDING', summary: 'missing StorageClass', resource: PVC },
      resolutionSteps: [{ command: 'kubectl apply -f sc.yaml' }],
      resolvedBy: 'U1',
      startedAt: new Date(at(0)),
      resolvedAt: new Date(at(100)),
      validation: { passed: true, reason: 'Validation passed', attempts: 2, at: at(100) },
    });
    expect(incident.validation).toEqual({ passed: true, reason: 'Validation passed', attempts: 2, at: at(100) });
  });

  it('dispatches the validate-fix step and refuses a payload without a session', async () => {
    expect(Object.keys(WORKFLOW_STEPS)).toContain('validate-fix');
    expect(WORKFLOW_STEPS['validate-fix']?.schema.safeParse({ step: 'validate-fix', envelope: {} }).success).toBe(
      false,
    );
  });
});
