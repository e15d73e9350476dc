import { describe, expect, it } from 'vitest';
import { classifyRequest } from '../../../src/diagnosis/commands/index.js';
import { evidenceFromEnvelope } from '../../../src/diagnosis/evidence-sources.js';
import { gateRequest } from '../../../src/diagnosis/gate.js';
import {
  detectPanicSignals,
  type PanicContext,
  type PanicSignal,
  type RecordedRequest,
} from '../../../src/diagnosis/panic.js';
import { planStepOf, withStepDone } from '../../../src/review/plan-progress.js';
import { at, envelope, when } from '../../support/diagnosis-fixtures.js';

/**
 * ADR-005's panic detector, tuned to what calmops itself proposed: following its suggested reads, taking a handoff it
 * offered, or running the approved plan step after step is the calm way through an incident, not panic.
 */

const evidence = evidenceFromEnvelope(envelope(), at(0));
const context = (extra: Partial<PanicContext> = {}): PanicContext => ({
  state: 'RESOLVING',
  evidence,
  recentRequests: [],
  panicHistory: [],
  overrideActive: false,
  now: when(100),
  ...extra,
});
const types = (signals: PanicSignal[]) => signals.map((s) => `${s.type}:${s.severity}`);
const recorded = (text: string, seconds: number, extra: Partial<RecordedRequest> = {}): RecordedRequest => ({
  request: classifyRequest(text),
  at: at(seconds),
  ...extra,
});

/** An approved plan in the review contract's shape: create the class, then recreate the claim that needs it. */
const plan = {
  steps: [
    {
      id: 'get-storageclass',
      command: 'kubectl get storageclass',
      needs: [],
    },
    {
      id: 'apply-storageclass',
      command: 'kubectl apply -f storageclass-fast-ssd.yaml',
      rollback: 'kubectl delete storageclass fast-ssd',
      needs: [],
    },
    {
      id: 'delete-pvc-data-db-0',
      command: 'kubectl delete pvc data-db-0 -n payments',
      rollback: 'kubectl apply -f pvc-data-db-0.yaml -n payments',
      needs: ['apply-storageclass'],
    },
  ],
};

describe('approved plan steps in order', () => {
  it('matches typed commands to the plan with the review matcher and keeps the plan order', () => {
    const apply = planStepOf(plan, 'kubectl apply -f ./storageclass-fast-ssd.yaml', undefined);
    expect(apply).toEqual({ stepIndex: 1, inOrder: true, stepId: 'apply-storageclass' });
    expect(planStepOf(plan, 'kubectl delete pvc data-db-0 -n payments', undefined)?.inOrder).toBe(false);
    const progress = withStepDone(undefined, 'plan-1', 1);
    expect(planStepOf(plan, 'oc delete persistentvolumeclaim data-db-0 --namespace=payments', progress)).toEqual({
      stepIndex: 2,
      inOrder: true,
      stepId: 'delete-pvc-data-db-0',
    });
    expect(withStepDone(progress, 'plan-2', 0)).toEqual({ planId: 'plan-2', completed: [0] });
    expect(planStepOf(plan, 'kubectl delete pvc other -n payments', progress)).toBeUndefined();
  });

  it('raises nothing for `kubectl apply …` then `kubectl delete pvc …` when they are the plan, in order', () => {
    const recent = [recorded('kubectl apply -f storageclass-fast-ssd.yaml', 95, { planStep: 1 })];
    const signals = detectPanicSignals(
      context({ recentRequests: recent, guidance: { planStep: { stepIndex: 2, inOrder: true } } }),
      classifyRequest('kubectl delete pvc data-db-0 -n payments'),
    );
    expect(signals).toEqual([]);
  });

  it('still calls the same two changes rapid fire when they are not the plan, or out of its order', () => {
    const recent = [recorded('kubectl apply -f storageclass-fast-ssd.yaml', 95)];
    const delete_ = classifyRequest('kubectl delete pvc data-db-0 -n payments');
    expect(types(detectPanicSignals(context({ recentRequests: recent }), delete_))).toContain(
      'rapid_fire_commands:high',
    );
    const outOfOrder = detectPanicSignals(
      context({ recentRequests: recent, guidance: { planStep: { stepIndex: 2, inOrder: false } } }),
      delete_,
    );
    expect(types(outOfOrder)).toContain('rapid_fire_commands:high');
    // A plan step that deletes what no evidence names is the plan's call, not a blind delete.
    const unknown = classifyRequest('kubectl delete pvc scratch -n payments');
    expect(types(detectPanicSignals(context(), unknown))).toContain('destructive_without_evidence:critical');
    expect(detectPanicSignals(context({ guidance: { planStep: { stepIndex: 2, inOrder: true } } }), unknown)).toEqual(
      [],
    );
  });

  it('lets the gate answer the plan step instead of forcing ANALYZING', () => {
    const recent = [recorded('kubectl apply -f storageclass-fast-ssd.yaml', 95, { planStep: 1 })];
    const session = { state: 'RESOLVING' as const, evidence, recentRequests: recent, panicHistory: [] };
    const tuned = gateRequest(
      { ...session, guidance: { planStep: { stepIndex: 2, inOrder: true } } },
      classifyRequest('kubectl delete pvc data-db-0 -n payments'),
      when(100),
    );
    expect(tuned).toMatchObject({ allowed: true, code: 'CHANGE_ALLOWED', signals: [] });
    const untuned = gateRequest(session, classifyRequest('kubectl delete pvc data-db-0 -n payments'), when(100));
    expect(untuned).toMatchObject({ allowed: false, code: 'BLOCKED_BY_PANIC', forcedState: 'ANALYZING' });
  });
});

describe('reads and handoffs calmops proposed', () => {
  const across = [recorded('kubectl get pvc -n payments', 50), recorded('kubectl get ingress -n payments', 60)];

  it('does not count reads calmops suggested as jumping between areas', () => {
    const nodes = classifyRequest('kubectl get nodes');
    expect(types(detectPanicSignals(context({ state: 'ANALYZING', recentRequests: across }), nodes))).toEqual([
      'jumping_between_domains:medium',
    ]);
    expect(
      detectPanicSignals(context({ state: 'ANALYZING', recentRequests: across, guidance: { suggested: true } }), nodes),
    ).toEqual([]);
    const guidedPath = across.map((r) => ({ ...r, guided: true }));
    expect(detectPanicSignals(context({ state: 'ANALYZING', recentRequests: guidedPath }), nodes)).toEqual([]);
  });

  it('treats the incident’s own domains and the handoffs calmops offered as one area', () => {
    const nodes = classifyRequest('kubectl get nodes');
    const related = { relatedDomains: ['storage', 'compute'] as const };
    // storage (the incident), networking, compute (the incident): two areas.
    expect(
      detectPanicSignals(context({ state: 'ANALYZING', recentRequests: across, guidance: { ...related } }), nodes),
    ).toEqual([]);
    // storage (the incident), networking, platform: three areas, still a jump.
    const platform = classifyRequest('kubectl get resourcequota -n payments');
    expect(
      types(
        detectPanicSignals(context({ state: 'ANALYZING', recentRequests: across, guidance: { ...related } }), platform),
      ),
    ).toEqual(['jumping_between_domains:medium']);
  });
});
