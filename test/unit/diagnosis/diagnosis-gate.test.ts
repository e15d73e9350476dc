import { describe, expect, it } from 'vitest';
import { grantOverride, validateBreakGlassRequest } from '../../../src/diagnosis/break-glass.js';
import { classifyRequest } from '../../../src/diagnosis/commands/index.js';
import type { EvidenceItem } from '../../../src/diagnosis/evidence.js';
import { evidenceFromEnvelope } from '../../../src/diagnosis/evidence-sources.js';
import { type GateSession, gateRequest } from '../../../src/diagnosis/gate.js';
import {
  detectPanicSignals,
  type PanicContext,
  type PanicSignal,
  type RecordedRequest,
} from '../../../src/diagnosis/panic.js';
import type { DiagnosticState } from '../../../src/diagnosis/state-machine.js';
import { at, envelope, when } from '../../support/diagnosis-fixtures.js';

const richEvidence: EvidenceItem[] = evidenceFromEnvelope(envelope(), at(0));

function session(state: DiagnosticState, extra: Partial<GateSession> = {}): GateSession {
  return { state, evidence: richEvidence, recentRequests: [], panicHistory: [], ...extra };
}

const recorded = (text: string, seconds: number): RecordedRequest => ({
  request: classifyRequest(text),
  at: at(seconds),
});

describe('gate per state', () => {
  const now = when(100);
  const cases: Array<[DiagnosticState, string, boolean, string]> = [
    ['GATHERING', 'kubectl get pods -n payments', true, 'READ_ALLOWED'],
    ['GATHERING', 'kubectl exec -it db-0 -- sh', false, 'BLOCKED_BY_STATE'],
    // Whether a hypothesis can be tested yet is the transition rules' call (walkTo), the same for buttons and text.
    ['GATHERING', 'hypothesis 1', true, 'HYPOTHESIS_RECORDED'],
    ['GATHERING', 'kubectl rollout restart deploy/api -n payments', false, 'BLOCKED_BY_PANIC'],
    ['ANALYZING', 'show me the logs', true, 'READ_ALLOWED'],
    ['ANALYZING', 'hypothesis 1', true, 'HYPOTHESIS_RECORDED'],
    ['ANALYZING', 'kubectl scale deploy/api --replicas=3 -n payments', false, 'BLOCKED_BY_PANIC'],
    ['ANALYZING', 'confirm the root cause', false, 'ROOT_CAUSE_TOO_EARLY'],
    ['HYPOTHESIZING', 'kubectl describe pvc data-db-0 -n payments', true, 'READ_ALLOWED'],
    ['HYPOTHESIZING', 'kubectl rollout restart deploy/api -n payments', false, 'BLOCKED_BY_STATE'],
    ['HYPOTHESIZING', 'kubectl port-forward svc/api 8080:80', false, 'BLOCKED_BY_STATE'],
    ['TESTING', 'kubectl exec -it db-0 -n payments -- sh', true, 'INSPECT_ALLOWED'],
    ['TESTING', 'kubectl rollout restart deploy/api -n payments', false, 'BLOCKED_BY_STATE'],
    ['TESTING', 'kubectl get secret db-creds -n payments', false, 'READ_REFUSED_SECRETS'],
    ['RESOLVING', 'kubectl rollout restart deploy/api -n payments', true, 'CHANGE_ALLOWED'],
    ['RESOLVING', 'kubectl delete pod db-0 -n payments', true, 'CHANGE_ALLOWED'],
    ['RESOLVING', 'resolved', true, 'FIX_REPORTED'],
    ['RESOLVING', 'break glass', true, 'BREAK_GLASS_FORM'],
    ['TESTING', 'consult the network specialist', true, 'HANDOFF_PROPOSED'],
    ['TESTING', "kubectl get pods -l 'app=web", false, 'READ_MALFORMED'],
  ];
  it.each(cases)('%s: %s', (state, text, allowed, code) => {
    const decision = gateRequest(session(state), classifyRequest(text), now);
    expect(decision.code).toBe(code);
    expect(decision.allowed).toBe(allowed);
    expect(decision.guidance.length).toBeGreaterThan(0);
  });

  it('names the state that opens a blocked class and what evidence is missing', () => {
    const decision = gateRequest(
      session('GATHERING', { evidence: [] }),
      classifyRequest('kubectl exec -it db-0 -- sh'),
      now,
    );
    expect(decision.reason).toMatch(/open in TESTING/);
    expect(decision.guidance).toMatch(/symptoms \(0\/2, detailed, or one seen in 2 kinds of evidence\)/);
  });

  it('allows confirming the root cause only once the hypothesis was tested', () => {
    const untested = gateRequest(session('TESTING'), classifyRequest('confirm the root cause'), now);
    expect(untested).toMatchObject({ allowed: false, code: 'ROOT_CAUSE_TOO_EARLY' });
    const tested = gateRequest(
      session('TESTING', {
        evidence: [
          ...richEvidence,
          { id: 't', type: 'hypothesis_test_results', description: 'x', source: 'user-read', at: at(50) },
        ],
      }),
      classifyRequest('confirm the root cause'),
      now,
    );
    expect(tested).toMatchObject({ allowed: true, code: 'ROOT_CAUSE_CONFIRMED' });
  });

  it('judges by the override state while a break-glass override is active, and not after it expires', () => {
    const request = validateBreakGlassRequest(
      {
        sessionId: 's1',
        requester: 'U1',
        seniorApprover: 'U2',
        justification: 'Checkout is down for every EU customer since 03:50',
        timeLimitMinutes: 15,
        skipToState: 'RESOLVING',
      },
      { session: { id: 's1', state: 'ANALYZING' } },
    );
    const override = grantOverride(request, { id: 'o1', approvedBy: 'U2', now: when(0) });
    const restart = classifyRequest('kubectl rollout restart deploy/api -n payments');
    const during = gateRequest(session('ANALYZING', { override }), restart, when(60));
    expect(during).toMatchObject({
      allowed: true,
      code: 'CHANGE_ALLOWED',
      effectiveState: 'RESOLVING',
      overrideActive: true,
    });
    expect(during.signals.map((s) => s.type)).not.toContain('bypassing_diagnostics');
    const after = gateRequest(session('ANALYZING', { override }), restart, when(16 * 60));
    expect(after).toMatchObject({ allowed: false, effectiveState: 'ANALYZING', overrideActive: false });
  });
});

describe('panic detector', () => {
  const context = (extra: Partial<PanicContext> = {}): PanicContext => ({
    state: 'RESOLVING',
    evidence: richEvidence,
    recentRequests: [],
    panicHistory: [],
    overrideActive: false,
    now: when(100),
    ...extra,
  });
  const types = (signals: PanicSignal[]) => signals.map((s) => `${s.type}:${s.severity}`);

  it('rapid fire: a second change within 30 seconds is high, one outside the window is not', () => {
    const restart = classifyRequest('kubectl rollout restart deploy/api -n payments');
    const inside = detectPanicSignals(
      context({ recentRequests: [recorded('kubectl scale deploy/api --replicas=4 -n payments', 80)] }),
      restart,
    );
    expect(types(inside)).toContain('rapid_fire_commands:high');
    const outside = detectPanicSignals(
      context({ recentRequests: [recorded('kubectl scale deploy/api --replicas=4 -n payments', 60)] }),
      restart,
    );
    expect(types(outside)).not.toContain('rapid_fire_commands:high');
    const reads = detectPanicSignals(context({ recentRequests: [recorded('kubectl get pods', 95)] }), restart);
    expect(types(reads)).not.toContain('rapid_fire_commands:high');
  });

  it('bypassing diagnostics: a change in GATHERING/ANALYZING or with fewer than 3 evidence items is critical', () => {
    const restart = classifyRequest('restart the deployment api');
    expect(types(detectPanicSignals(context({ state: 'ANALYZING' }), restart))).toContain(
      'bypassing_diagnostics:critical',
    );
    expect(types(detectPanicSignals(context({ evidence: richEvidence.slice(0, 2) }), restart))).toContain(
      'bypassing_diagnostics:critical',
    );
    expect(types(detectPanicSignals(context(), restart))).not.toContain('bypassing_diagnostics:critical');
    expect(types(detectPanicSignals(context({ state: 'GATHERING' }), classifyRequest('kubectl get pods')))).toEqual([]);
  });

  it('jumping between domains: three domains without a hypothesis is medium and lets the read through', () => {
    const recent = [recorded('kubectl get pvc -n payments', 50), recorded('kubectl get ingress -n payments', 60)];
    const request = classifyRequest('kubectl get nodes');
    const signals = detectPanicSignals(context({ state: 'ANALYZING', recentRequests: recent }), request);
    expect(types(signals)).toEqual(['jumping_between_domains:medium']);
    const decision = gateRequest(session('ANALYZING', { recentRequests: recent }), request, when(100));
    expect(decision).toMatchObject({ allowed: true, code: 'READ_ALLOWED' });
    expect(decision.warning).toMatch(/moving quickly/);
    const afterHypothesis = [...recent, recorded('hypothesis 1', 70)];
    expect(
      detectPanicSignals(context({ recentRequests: afterHypothesis }), classifyRequest('kubectl get svc')),
    ).toEqual([]);
  });

  it('a medium warning ignored within 10 minutes comes back as high and blocks', () => {
    const recent = [recorded('kubectl get pvc -n payments', 50), recorded('kubectl get ingress -n payments', 60)];
    const earlier: PanicSignal = {
      type: 'jumping_between_domains',
      severity: 'medium',
      at: at(30),
      description: 'earlier',
      evidence: {},
    };
    const decision = gateRequest(
      session('ANALYZING', { recentRequests: recent, panicHistory: [earlier] }),
      classifyRequest('kubectl get nodes'),
      when(100),
    );
    expect(decision).toMatchObject({ allowed: false, code: 'BLOCKED_BY_PANIC', forcedState: 'ANALYZING' });
  });

  it('escalating permissions: a second override request within 15 minutes is high', () => {
    const first = detectPanicSignals(context(), classifyRequest('break glass'));
    expect(first).toEqual([]);
    const second = detectPanicSignals(
      context({ recentRequests: [recorded('break glass', 0)] }),
      classifyRequest('kubectl get pods --as=admin'),
    );
    expect(types(second)).toContain('escalating_permissions:high');
    const later = detectPanicSignals(
      context({ now: when(16 * 60), recentRequests: [recorded('break glass', 0)] }),
      classifyRequest('we need to skip the checks'),
    );
    expect(types(later)).not.toContain('escalating_permissions:high');
  });

  it('destructive without evidence: deleting a resource nothing points at is critical', () => {
    const unknown = detectPanicSignals(context(), classifyRequest('kubectl delete pod cache-0 -n payments'));
    expect(types(unknown)).toContain('destructive_without_evidence:critical');
    const known = detectPanicSignals(context(), classifyRequest('kubectl delete pod db-0 -n payments'));
    expect(types(known)).not.toContain('destructive_without_evidence:critical');
    const wide = detectPanicSignals(context(), classifyRequest('kubectl delete pods --all -n payments'));
    expect(types(wide)).toContain('destructive_without_evidence:critical');
    const exec = detectPanicSignals(context(), classifyRequest('kubectl exec -it cache-0 -- sh'));
    expect(exec).toEqual([]);
  });

  it('blocks with the calming message, recommended actions and a forced ANALYZING', () => {
    const decision = gateRequest(
      session('GATHERING', { evidence: [] }),
      classifyRequest('just delete the pod'),
      when(5),
    );
    expect(decision).toMatchObject({ allowed: false, code: 'BLOCKED_BY_PANIC', forcedState: 'ANALYZING' });
    expect(decision.signals.map((s) => s.type).sort()).toEqual([
      'bypassing_diagnostics',
      'destructive_without_evidence',
    ]);
    expect(decision.guidance).toContain("🛑 Hold on - I'm detecting some concerning patterns");
    expect(decision.guidance).toContain('• Trying to apply fixes before understanding the problem');
    expect(decision.guidance).not.toMatch(/Ã|â€|ðŸ/);
    expect(decision.intervention?.recommendedActions).toHaveLength(4);
  });
});
