import { describe, expect, it } from 'vitest';
import { classifyRequest } from '../../../src/diagnosis/commands/index.js';
import type { EvidenceItem, WorkflowSnapshot } from '../../../src/diagnosis/evidence.js';
import { formatMissing, missingEvidence } from '../../../src/diagnosis/evidence-requirements.js';
import {
  evidenceFromConfirmation,
  evidenceFromEnvelope,
  evidenceFromHypothesis,
  evidenceFromMemorySearch,
  evidenceFromPlan,
  evidenceFromRead,
} from '../../../src/diagnosis/evidence-sources.js';
import {
  DEFAULT_MIN_TIME_IN_STATE_SECONDS,
  STATE_MACHINE,
  transitionRules,
} from '../../../src/diagnosis/state-machine.js';
import { advance, describeHold, timeLeft, walkTo } from '../../../src/diagnosis/transitions.js';
import { at, envelope, finding } from '../../support/diagnosis-fixtures.js';

const plan = {
  id: 'plan-1',
  title: 'Create the missing StorageClass',
  steps: [
    {
      id: 'apply-storageclass',
      mode: 'write' as const,
      command: 'kubectl apply -f storageclass-fast-ssd.yaml',
      rollback: 'kubectl delete storageclass fast-ssd',
    },
  ],
};

/** An incident with exactly one finding: the crash-looping pod, seen in its events and its logs. */
function oneFinding() {
  return envelope({
    findings: [
      finding({
        code: 'CRASH_LOOP',
        resource: { kind: 'Pod', name: 'api-1', namespace: 'payments' },
        message: 'Pod api-1 is in CrashLoopBackOff',
      }),
    ],
    rootCause: [
      {
        rank: 1,
        code: 'CRASH_LOOP',
        summary: 'api crashes on start',
        confidence: 0.8,
        resource: { kind: 'Pod', name: 'api-1', namespace: 'payments' },
      },
    ],
  });
}

const start = (evidence: EvidenceItem[], state: WorkflowSnapshot['state'] = 'GATHERING'): WorkflowSnapshot => ({
  state,
  evidence,
  stateEnteredAt: at(0),
});

const hops = (steps: ReturnType<typeof advance>['steps']) =>
  steps.map((s) => (s.kind === 'transition' ? `${s.from}>${s.to}` : s.kind));

describe('requirements that an incident can meet', () => {
  it('counts kinds of evidence when the incident has fewer findings than the symptoms asked for', () => {
    const evidence = [...evidenceFromEnvelope(oneFinding(), at(1)), ...evidenceFromMemorySearch([], at(2))];
    expect(evidence.filter((e) => e.type === 'symptoms')).toHaveLength(1);
    expect(missingEvidence('GATHERING', evidence)).toEqual([]);
    expect(missingEvidence('ANALYZING', evidence)).toEqual([]);
    expect(hops(advance(start(evidence), at(3)).steps)).toEqual(['GATHERING>ANALYZING', 'ANALYZING>HYPOTHESIZING']);
  });

  it('still needs a symptom: a healthy namespace read in every way stays in GATHERING', () => {
    const healthy = evidenceFromEnvelope(envelope({ findings: [], rootCause: [] }), at(1));
    const gaps = missingEvidence('GATHERING', healthy);
    expect(gaps.map((g) => g.type)).toEqual(['symptoms', 'affected_resources']);
    expect(formatMissing(gaps)).toMatch(/symptoms \(0\/2, detailed, or one seen in 2 kinds of evidence\)/);
    expect(advance(start(healthy), at(2)).steps).toEqual([]);
  });

  it('does not count the record of the triage run as a kind of evidence about the fault', () => {
    const bare = evidenceFromEnvelope(
      envelope({ ...oneFinding(), evidence: { ...oneFinding().evidence, present: [] } }),
      at(1),
    );
    expect(missingEvidence('GATHERING', bare).map((g) => g.type)).toEqual(['symptoms']);
    const withEvents = [
      ...bare,
      ...evidenceFromRead(
        classifyRequest('kubectl get events -n payments'),
        { outcome: 'ok' },
        { state: 'GATHERING', at: at(2) },
      ),
    ];
    expect(missingEvidence('GATHERING', withEvents)).toEqual([]);
  });

  it('moves TESTING to RESOLVING only on an approved plan', () => {
    const env = envelope();
    const base = [
      ...evidenceFromEnvelope(env, at(1)),
      ...evidenceFromMemorySearch([], at(2)),
      ...evidenceFromHypothesis(classifyRequest('hypothesis 1'), { at: at(3), rootCause: env.rootCause }),
      ...evidenceFromRead(
        classifyRequest('kubectl get storageclass'),
        { outcome: 'ok' },
        { state: 'TESTING', at: at(4) },
      ),
    ];
    const confirmed = evidenceFromConfirmation(classifyRequest('confirmed'), base, at(5));
    // Entered TESTING when the hypothesis was chosen.
    const testing = { ...start([...base, ...confirmed], 'TESTING'), stateEnteredAt: at(3) };
    // Confirmed, tested: still TESTING until a reviewer approves the plan.
    expect(advance(testing, at(6)).steps).toEqual([]);
    expect(missingEvidence('TESTING', testing.evidence).map((g) => g.label)).toEqual([
      'an approved remediation plan',
      'a rollback plan',
    ]);
    // A plan someone typed is no approved plan.
    const typed: EvidenceItem = { id: 'x', type: 'solution_plan', description: 'my plan', source: 'user', at: at(6) };
    expect(advance({ ...testing, evidence: [...testing.evidence, typed] }, at(7)).steps).toEqual([]);
    const approved = advance({ ...testing, evidence: [...testing.evidence, ...evidenceFromPlan(plan, at(8))] }, at(8));
    expect(hops(approved.steps)).toEqual(['TESTING>RESOLVING']);
    expect(approved.steps[0]?.kind === 'transition' && approved.steps[0].reason).toMatch(
      /TESTING → RESOLVING: requirements met \(.*1 an approved remediation plan, 1 a rollback plan\)/,
    );
  });
});

describe('minTimeInState', () => {
  it('comes from the ADR for GATHERING, small by default and configurable', () => {
    expect(STATE_MACHINE.GATHERING.minTimeInStateSeconds).toBe(30);
    expect(transitionRules().minTimeInStateSeconds).toEqual({ GATHERING: DEFAULT_MIN_TIME_IN_STATE_SECONDS });
    expect(DEFAULT_MIN_TIME_IN_STATE_SECONDS).toBeLessThan(30);
    expect(transitionRules(0).minTimeInStateSeconds).toEqual({ GATHERING: 0 });
  });

  it('holds a forward move until the state lasted long enough, judged by the recorded entry time', () => {
    const rules = transitionRules(30);
    const evidence = [...evidenceFromEnvelope(envelope(), at(2)), ...evidenceFromMemorySearch([], at(3))];
    const snapshot = start(evidence);
    expect(timeLeft(snapshot, at(10), rules)).toBe(20);
    expect(advance(snapshot, at(10), rules).steps).toEqual([]);
    const later = advance(snapshot, at(31), rules);
    expect(hops(later.steps)).toEqual(['GATHERING>ANALYZING', 'ANALYZING>HYPOTHESIZING']);
    expect(later.snapshot.stateEnteredAt).toBe(at(31));
    // The minimum is GATHERING's only: the next states move as soon as their evidence is in.
    expect(timeLeft({ state: 'ANALYZING', stateEnteredAt: at(31) }, at(31), rules)).toBe(0);
  });

  it('does not hold a fix validation back', () => {
    const rules = transitionRules(30);
    const snapshot: WorkflowSnapshot = {
      state: 'GATHERING',
      stateEnteredAt: at(60),
      evidence: evidenceFromEnvelope(envelope(), at(61)),
      validation: { startedAt: at(60), codes: ['PVC_PENDING'] },
    };
    expect(advance(snapshot, at(62), rules).steps[0]).toMatchObject({ kind: 'transition', cause: 'validation' });
  });
});

describe('walking to a requested state', () => {
  it('walks a chosen hypothesis from GATHERING through every state, each hop with its reason', () => {
    const env = envelope();
    const evidence = [...evidenceFromEnvelope(env, at(1)), ...evidenceFromMemorySearch([], at(2))];
    const hypothesis = evidenceFromHypothesis(classifyRequest('hypothesis 1'), {
      at: at(40),
      rootCause: env.rootCause,
    });
    const walk = walkTo(start(evidence), hypothesis, 'TESTING', at(40), transitionRules(30));
    expect(walk.reached).toBe(true);
    expect(hops(walk.steps)).toEqual(['GATHERING>ANALYZING', 'ANALYZING>HYPOTHESIZING', 'HYPOTHESIZING>TESTING']);
    for (const step of walk.steps) expect(step.kind === 'transition' && step.reason).toMatch(/requirements met \(/);
  });

  it('stops where the requirements stop and says what is missing and how to get it', () => {
    const env = envelope();
    const hypothesis = evidenceFromHypothesis(classifyRequest('hypothesis 1'), {
      at: at(40),
      rootCause: env.rootCause,
    });
    const walk = walkTo(start(evidenceFromEnvelope(env, at(1))), hypothesis, 'TESTING', at(40));
    expect(walk.reached).toBe(false);
    if (walk.reached) return;
    expect(walk.hold.state).toBe('ANALYZING');
    expect(describeHold(walk.hold)).toMatch(
      /ANALYZING still needs a search of past incidents \(0\/1\) — ask “have we seen this before\?”/,
    );
  });

  it('stops in GATHERING while its minimum time runs, and says how long', () => {
    const env = envelope();
    const evidence = [...evidenceFromEnvelope(env, at(1)), ...evidenceFromMemorySearch([], at(2))];
    const hypothesis = evidenceFromHypothesis(classifyRequest('hypothesis 1'), { at: at(4), rootCause: env.rootCause });
    const walk = walkTo(start(evidence), hypothesis, 'TESTING', at(4), transitionRules(30));
    expect(walk.reached).toBe(false);
    if (walk.reached) return;
    expect(walk.hold).toMatchObject({ state: 'GATHERING', wait: 26, missing: [] });
    expect(describeHold(walk.hold)).toBe(
      'GATHERING lasts at least 30 s before the evidence may move it on (26 s to go)',
    );
  });
});
