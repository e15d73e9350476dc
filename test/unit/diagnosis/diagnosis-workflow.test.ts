import { describe, expect, it } from 'vitest';
import { classifyRequest } from '../../../src/diagnosis/commands/index.js';
import { mergeEvidence, type WorkflowSnapshot } from '../../../src/diagnosis/evidence.js';
import { evidenceFigure, missingEvidence } from '../../../src/diagnosis/evidence-requirements.js';
import {
  evidenceFromConfirmation,
  evidenceFromEnvelope,
  evidenceFromHypothesis,
  evidenceFromMemorySearch,
  evidenceFromPlan,
  evidenceFromRead,
  evidenceFromResolved,
} from '../../../src/diagnosis/evidence-sources.js';
import { canTransition, STATE_MACHINE } from '../../../src/diagnosis/state-machine.js';
import { evaluateTransition } from '../../../src/diagnosis/transitions.js';
import { advanceWith, at, confirmedRootCauseEvidence, envelope } from '../../support/diagnosis-fixtures.js';

const plan = {
  id: 'plan-1',
  title: 'Create the missing StorageClass',
  steps: [
    { id: 's1', mode: 'read' as const, command: 'kubectl get storageclass' },
    {
      id: 's2',
      mode: 'write' as const,
      command: 'kubectl apply -f storageclass-fast-ssd.yaml',
      rollback: 'kubectl delete storageclass fast-ssd',
    },
  ],
};

describe('states', () => {
  it('follows the ADR transitions and lets panic force only ANALYZING', () => {
    expect(canTransition('GATHERING', 'ANALYZING', 'evidence')).toBe(true);
    expect(canTransition('GATHERING', 'RESOLVING', 'evidence')).toBe(false);
    expect(canTransition('RESOLVING', 'GATHERING', 'evidence')).toBe(true);
    expect(canTransition('TESTING', 'ANALYZING', 'panic-intervention')).toBe(true);
    expect(canTransition('TESTING', 'HYPOTHESIZING', 'panic-intervention')).toBe(false);
    expect(canTransition('GATHERING', 'TESTING', 'break-glass')).toBe(true);
    expect(canTransition('TESTING', 'GATHERING', 'break-glass')).toBe(false);
    expect(STATE_MACHINE.GATHERING.blockedToolClasses).toContain('write');
    expect(STATE_MACHINE.TESTING.allowedToolClasses).toContain('inspect');
    expect(STATE_MACHINE.RESOLVING.blockedToolClasses).toEqual([]);
  });
});

describe('evidence and transitions', () => {
  it('walks a session from GATHERING to a validated fix, with a reason for every step', () => {
    const env = envelope();
    let snapshot: WorkflowSnapshot = { state: 'GATHERING', evidence: [], stateEnteredAt: at(0) };
    expect(evaluateTransition(snapshot)).toBeNull();

    let result = advanceWith(snapshot, evidenceFromEnvelope(env, at(1)), at(1));
    expect(result.steps.map((s) => s.kind === 'transition' && `${s.from}>${s.to}`)).toEqual(['GATHERING>ANALYZING']);
    expect(result.steps[0]?.reason).toMatch(/3 symptoms, \d+ affected resources/);
    snapshot = result.snapshot;
    expect(missingEvidence('ANALYZING', snapshot.evidence).map((g) => g.type)).toEqual(['similar_incidents']);

    result = advanceWith(snapshot, evidenceFromMemorySearch([], at(10)), at(10));
    expect(result.snapshot.state).toBe('HYPOTHESIZING');
    snapshot = result.snapshot;

    const hypothesis = evidenceFromHypothesis(classifyRequest('hypothesis 1'), {
      at: at(20),
      rootCause: env.rootCause,
      nextActions: env.nextActions,
    });
    expect(hypothesis.map((e) => e.type)).toEqual(['hypothesis', 'test_plan']);
    expect(hypothesis[1]?.description).toContain('kubectl get storageclass');
    result = advanceWith(snapshot, hypothesis, at(20));
    expect(result.snapshot.state).toBe('TESTING');
    snapshot = result.snapshot;

    const read = evidenceFromRead(
      classifyRequest('kubectl get storageclass'),
      { outcome: 'ok', summary: '2 classes, no fast-ssd' },
      { state: 'TESTING', at: at(30) },
    );
    expect(read.map((e) => e.type)).toContain('hypothesis_test_results');
    const confirmed = evidenceFromConfirmation(classifyRequest('confirm the root cause'), snapshot.evidence, at(40));
    expect(confirmed[0]).toMatchObject({ type: 'confirmed_root_cause', code: 'PVC_PENDING' });
    result = advanceWith(snapshot, [...read, ...confirmed], at(40));
    expect(result.snapshot.state).toBe('TESTING');
    snapshot = result.snapshot;
    expect(missingEvidence('TESTING', snapshot.evidence).map((g) => g.type)).toEqual([
      'solution_plan',
      'rollback_plan',
    ]);

    result = advanceWith(snapshot, evidenceFromPlan(plan, at(50)), at(50));
    expect(result.snapshot.state).toBe('RESOLVING');
    snapshot = result.snapshot;

    result = advanceWith(snapshot, evidenceFromResolved(classifyRequest('resolved'), at(60)), at(60));
    const reentry = result.steps[0];
    expect(reentry).toMatchObject({ kind: 'transition', from: 'RESOLVING', to: 'GATHERING', cause: 'validation' });
    expect(reentry?.kind === 'transition' && reentry.validation?.codes).toEqual(['PVC_PENDING']);
    snapshot = result.snapshot;
    expect(snapshot.validation).toBeTruthy();
    // Old evidence does not carry the session forward while a fix is being validated.
    expect(evaluateTransition(snapshot)).toBeNull();

    const healthy = envelope({ findings: [], rootCause: [] });
    result = advanceWith(snapshot, evidenceFromEnvelope(healthy, at(70)), at(70));
    expect(result.steps).toEqual([
      { kind: 'validated', from: 'GATHERING', reason: expect.stringContaining('PVC_PENDING') },
    ]);
  });

  it('goes back to ANALYZING with a new reasoning cycle when the fix did not work', () => {
    const env = envelope();
    const confirmed = confirmedRootCauseEvidence(env);
    const snapshot: WorkflowSnapshot = {
      state: 'GATHERING',
      stateEnteredAt: at(60),
      evidence: [...confirmed, ...evidenceFromPlan(plan, at(50))],
      validation: { startedAt: at(60), codes: ['PVC_PENDING'] },
    };
    const result = advanceWith(snapshot, evidenceFromEnvelope(env, at(70)), at(70));
    expect(result.steps).toHaveLength(1);
    expect(result.steps[0]).toMatchObject({ kind: 'transition', to: 'ANALYZING', cause: 'validation' });
    expect(result.steps[0]?.reason).toMatch(/Validation failed: PVC_PENDING/);
    // The previous memory search and hypothesis belong to the old cycle: ANALYZING waits for a new search.
    expect(result.snapshot.state).toBe('ANALYZING');
    expect(result.snapshot.cycleStartedAt).toBe(at(70));
  });

  it('returns from TESTING to HYPOTHESIZING on a new hypothesis, then tests it', () => {
    const env = envelope();
    const base = [
      ...evidenceFromEnvelope(env, at(1)),
      ...evidenceFromMemorySearch([], at(10)),
      ...evidenceFromHypothesis(classifyRequest('hypothesis 1'), { at: at(20), rootCause: env.rootCause }),
    ];
    const snapshot: WorkflowSnapshot = { state: 'TESTING', evidence: base, stateEnteredAt: at(20) };
    const next = evidenceFromHypothesis(classifyRequest('hypothesis 2'), { at: at(30), rootCause: env.rootCause });
    const result = advanceWith(snapshot, next, at(30));
    expect(result.steps.map((s) => s.kind === 'transition' && s.to)).toEqual(['HYPOTHESIZING', 'TESTING']);
    expect(result.steps[0]?.reason).toMatch(/POD_UNSCHEDULABLE/);
  });

  it('treats a fix reported early as a validation too', () => {
    const snapshot: WorkflowSnapshot = {
      state: 'ANALYZING',
      evidence: evidenceFromEnvelope(envelope(), at(1)),
      stateEnteredAt: at(1),
    };
    const result = advanceWith(
      snapshot,
      evidenceFromResolved(classifyRequest('it recovered on its own, resolved'), at(5)),
      at(5),
    );
    expect(result.steps[0]).toMatchObject({ to: 'GATHERING', cause: 'validation' });
    expect(result.steps[0]?.reason).toMatch(/before a confirmed, planned fix/);
  });

  it('counts a read that found nothing but not one that failed', () => {
    const logs = classifyRequest('kubectl logs db-0 -n payments');
    expect(
      evidenceFromRead(
        logs,
        { outcome: 'empty', summary: 'container never started' },
        { state: 'ANALYZING', at: at(1) },
      ),
    ).toHaveLength(1);
    expect(evidenceFromRead(logs, { outcome: 'failed' }, { state: 'ANALYZING', at: at(1) })).toEqual([]);
  });

  it('ignores a hypothesis rank the envelope does not have', () => {
    expect(
      evidenceFromHypothesis(classifyRequest('hypothesis 7'), { at: at(1), rootCause: envelope().rootCause }),
    ).toEqual([]);
  });

  it('deduplicates re-observed symptoms and keeps the newest time', () => {
    const first = evidenceFromEnvelope(envelope(), at(1));
    const again = evidenceFromEnvelope(envelope(), at(9));
    const merged = mergeEvidence(first, again);
    const symptoms = merged.filter((e) => e.type === 'symptoms');
    expect(symptoms).toHaveLength(3);
    expect(symptoms.every((e) => e.at === at(9))).toBe(true);
  });

  it('a plan without rollbacks is no rollback plan', () => {
    const items = evidenceFromPlan(
      { id: 'p', steps: [{ id: 'a', mode: 'write', command: 'kubectl rollout restart deploy/web' }] },
      at(1),
    );
    expect(items.map((e) => e.type)).toEqual(['solution_plan']);
  });

  it('has one evidence figure: the latest triage completeness against its threshold', () => {
    expect(evidenceFigure([])).toBeUndefined();
    const first = evidenceFromEnvelope(envelope(), at(1));
    expect(evidenceFigure(first)).toEqual({ value: 0.9, threshold: 0.8 });
    const later = evidenceFromEnvelope(
      envelope({ evidence: { completeness: 0.5, threshold: 0.8, present: [], missing: ['logs'], gaps: [] } }),
      at(5),
    );
    // A read or a plan does not change it; the newest triage does.
    const reads = evidenceFromRead(
      classifyRequest('kubectl get pods'),
      { outcome: 'ok' },
      { state: 'ANALYZING', at: at(3) },
    );
    expect(evidenceFigure(mergeEvidence(mergeEvidence(first, reads), later))).toEqual({ value: 0.5, threshold: 0.8 });
  });
});
