import { describe, expect, it } from 'vitest';
import { classifyRequest } from '../../../src/diagnosis/commands/index.js';
import type { EvidenceItem } from '../../../src/diagnosis/evidence.js';
import {
  evidenceFromEnvelope,
  evidenceFromHypothesis,
  evidenceFromMemorySearch,
  evidenceFromPlan,
  evidenceFromRead,
} from '../../../src/diagnosis/evidence-sources.js';
import type { DiagnosticState } from '../../../src/diagnosis/state-machine.js';
import { transitionRules } from '../../../src/diagnosis/state-machine.js';
import type { InboxMessage } from '../../../src/store/inbox.js';
import { SessionRecordSchema } from '../../../src/store/sessions.js';
import { type WorkflowRecord, WorkflowRecordSchema } from '../../../src/store/workflow-records.js';
import {
  type DecideContext,
  type Decision,
  decide,
  guidanceText,
  type LoadedPlan,
} from '../../../src/workflow/diagnostic/route/decide.js';
import { hypothesesFromCauses } from '../../../src/workflow/reads.js';
import { at, envelope, finding, when } from '../../support/diagnosis-fixtures.js';

/**
 * The route's decision table: one thread input, the session it lands in, and what it means. `decide` does no I/O,
 * so every row is a pure call.
 */

const env = envelope({
  promptSuggestions: [
    'Explain PVC_PENDING for PersistentVolumeClaim data-db-0 and how to confirm it',
    'Show the events of the pending claim',
    'Is a pod waiting on this claim?',
    'Ask the storage specialist to review payments',
  ],
});

function session(state: DiagnosticState, extra: Record<string, unknown> = {}) {
  return SessionRecordSchema.parse({
    id: 'S1',
    state,
    status: 'open',
    intent: 'pvc-binding',
    namespace: 'payments',
    channelId: 'C1',
    threadTs: '1700000000.000100',
    requester: 'U1',
    version: 3,
    createdAt: at(0),
    updatedAt: at(1),
    ...extra,
  });
}

/** Triaged at 1 s, memory searched at 2 s: what a session holds before anyone typed. */
const triaged: EvidenceItem[] = [...evidenceFromEnvelope(env, at(1)), ...evidenceFromMemorySearch([], at(2))];

function workflow(evidence: EvidenceItem[] = triaged, extra: Partial<WorkflowRecord> = {}): WorkflowRecord {
  return WorkflowRecordSchema.parse({
    sessionId: 'S1',
    version: 5,
    stateEnteredAt: at(2),
    evidence,
    hypotheses: hypothesesFromCauses(env.rootCause, 'payments'),
    ...extra,
  });
}

let seq = 0;
function message(text: string, extra: Partial<InboxMessage> = {}): InboxMessage {
  seq += 1;
  return {
    id: `01J0000000000000000000${String(seq).padStart(4, '0')}`,
    sessionId: 'S1',
    receivedAt: at(50),
    kind: 'message',
    userId: 'U1',
    text,
    data: {},
    ...extra,
  } as InboxMessage;
}

const context = (extra: Partial<DecideContext> = {}): DecideContext => ({
  now: when(60),
  rules: transitionRules(0),
  envelope: env,
  readScope: { namespace: 'payments', extraNamespaces: [] },
  maxHandoffs: 3,
  ...extra,
});

function hops(decision: Decision): string[] {
  return decision.kind === 'hypothesis'
    ? decision.walk.map((s) => (s.kind === 'transition' ? `${s.from}>${s.to}` : s.kind))
    : [];
}

describe('decide: what a thread input means', () => {
  const table: Array<[DiagnosticState, string, Decision['kind']]> = [
    ['HYPOTHESIZING', 'kubectl get pods', 'read'],
    ['HYPOTHESIZING', 'show me the logs', 'read'],
    ['HYPOTHESIZING', 'have we seen this before?', 'memory'],
    ['HYPOTHESIZING', 'any similar incidents?', 'memory'],
    ['HYPOTHESIZING', 'Explain PVC_PENDING for PersistentVolumeClaim data-db-0 and how to confirm it', 'answer'],
    ['HYPOTHESIZING', 'Re-run the pvc-binding triage in payments once logs can be read', 'answer'],
    ['HYPOTHESIZING', 'Which container hit its memory limit?', 'read'],
    ['HYPOTHESIZING', 'Ask the storage specialist to review payments', 'handoff'],
    ['HYPOTHESIZING', 'consult the platform specialist', 'handoff'],
    ['HYPOTHESIZING', 'kubectl get pods -n kube-system', 'read-refused'],
    ['HYPOTHESIZING', 'kubectl get secret db-creds -n payments', 'refuse'],
    ['HYPOTHESIZING', 'kubectl rollout restart deploy/api -n payments', 'refuse'],
    ['HYPOTHESIZING', 'kubectl delete pvc --all -n payments', 'panic'],
    ['HYPOTHESIZING', 'I think the storage class is missing', 'hypothesis'],
    ['HYPOTHESIZING', 'hypothesis 7', 'stale-hypothesis'],
    ['HYPOTHESIZING', 'confirm the root cause', 'refuse'],
    ['HYPOTHESIZING', 'resolved', 'fix'],
    ['HYPOTHESIZING', 'break glass', 'break-glass-form'],
    ['HYPOTHESIZING', 'close', 'close'],
    ['HYPOTHESIZING', 'thanks, looking at the dashboards', 'silent'],
    ['HYPOTHESIZING', 'is it fixed yet?', 'guide'],
    ['HYPOTHESIZING', 'yes', 'guide'],
    ['TESTING', 'kubectl exec -it db-0 -n payments -- sh', 'inspect'],
  ];
  it.each(table)('%s: %s → %s', (state, text, kind) => {
    expect(decide(session(state), workflow(), message(text), context()).kind).toBe(kind);
  });

  it('aims words at the incident: the logs of its pod, the events of its claim', () => {
    const logs = decide(session('HYPOTHESIZING'), workflow(), message('show me the logs'), context());
    expect(logs).toMatchObject({
      kind: 'read',
      spec: { verb: 'logs', kind: 'pods', name: 'db-0', namespace: 'payments' },
    });
    const events = decide(
      session('HYPOTHESIZING'),
      workflow(),
      message('Show the events of the pending claim'),
      context(),
    );
    expect(events).toMatchObject({ kind: 'read', spec: { verb: 'events', name: 'data-db-0' } });
    expect(events.kind === 'read' && events.facts[0]).toMatch(
      /^PVC_PENDING on PersistentVolumeClaim payments\/data-db-0/,
    );
  });

  it('answers a read outside the session with what the triage already knows there', () => {
    const refused = decide(session('HYPOTHESIZING'), workflow(), message('kubectl get pods -n kube-system'), context());
    expect(refused).toMatchObject({ kind: 'read-refused', scope: { code: 'namespace-not-allowed' } });
  });

  it('locates first, takes break-glass and namespace buttons, and tells a stale button', () => {
    expect(decide(session('GATHERING', { namespace: '' }), workflow(), message('in payments'), context())).toEqual({
      kind: 'locate',
      answer: { from: 'message' },
    });
    expect(
      decide(
        session('GATHERING'),
        workflow(),
        message('in shop', { kind: 'button', data: { action: { type: 'namespace', namespace: 'shop' } } }),
        context(),
      ),
    ).toEqual({ kind: 'locate', answer: { from: 'button', namespace: 'shop' } });
    expect(
      decide(
        session('GATHERING'),
        workflow(),
        message('break-glass', { kind: 'button', data: { action: { type: 'break-glass', requestId: 'bg-1' } } }),
        context(),
      ),
    ).toEqual({ kind: 'break-glass', requestId: 'bg-1' });
    const stale = decide(
      session('HYPOTHESIZING'),
      workflow(),
      message('test', { kind: 'button', data: { action: { type: 'hypothesis', hypothesisId: 'gone' } } }),
      context(),
    );
    expect(stale).toMatchObject({ kind: 'stale-hypothesis', text: expect.stringMatching(/no longer on the list/) });
  });
});

describe('decide: one rule for hypothesis buttons and sentences', () => {
  const button = (id: string) =>
    message('test hypothesis', { kind: 'button', data: { action: { type: 'hypothesis', hypothesisId: id } } });

  it('walks a button from GATHERING through ANALYZING and HYPOTHESIZING, exactly as the sentence does', () => {
    const byButton = decide(session('GATHERING'), workflow(), button('h1'), context());
    const byText = decide(session('GATHERING'), workflow(), message('hypothesis 1'), context());
    expect(byButton.kind).toBe('hypothesis');
    expect(hops(byButton)).toEqual(['GATHERING>ANALYZING', 'ANALYZING>HYPOTHESIZING', 'HYPOTHESIZING>TESTING']);
    expect(hops(byText)).toEqual(hops(byButton));
  });

  it('refuses both alike with what is missing when a state on the way is not done', () => {
    const unsearched = workflow(evidenceFromEnvelope(env, at(1)));
    for (const input of [button('h1'), message('hypothesis 1'), message('I think the storage class is missing')]) {
      const decision = decide(session('GATHERING'), unsearched, input, context());
      expect(decision.kind).toBe('hold');
      expect(decision.kind === 'hold' && decision.text).toMatch(
        /stops at ANALYZING\. ANALYZING still needs a search of past incidents \(0\/1\) — ask “have we seen this before\?”/,
      );
    }
  });

  it('refuses both alike while GATHERING’s minimum time runs, from the recorded entry time', () => {
    const early = context({ now: when(4), rules: transitionRules(30) });
    const young = workflow(triaged, { version: 0 });
    for (const input of [button('h1'), message('hypothesis 1')]) {
      const decision = decide(session('GATHERING'), young, input, early);
      expect(decision.kind === 'hold' && decision.hold).toMatchObject({ state: 'GATHERING', wait: 26 });
    }
    expect(
      decide(session('GATHERING'), young, button('h1'), context({ now: when(31), rules: transitionRules(30) })).kind,
    ).toBe('hypothesis');
  });

  it('lets a one-finding incident reach TESTING: its kinds of evidence count', () => {
    const single = envelope({
      findings: [finding({ code: 'CRASH_LOOP', resource: { kind: 'Pod', name: 'api-1', namespace: 'payments' } })],
      rootCause: [
        {
          rank: 1,
          code: 'CRASH_LOOP',
          summary: 'crashes',
          confidence: 0.8,
          resource: { kind: 'Pod', name: 'api-1', namespace: 'payments' },
        },
      ],
    });
    const w = WorkflowRecordSchema.parse({
      sessionId: 'S1',
      version: 5,
      stateEnteredAt: at(2),
      evidence: [...evidenceFromEnvelope(single, at(1)), ...evidenceFromMemorySearch([], at(2))],
      hypotheses: hypothesesFromCauses(single.rootCause, 'payments'),
    });
    expect(hops(decide(session('GATHERING'), w, message('hypothesis 1'), context({ envelope: single })))).toEqual([
      'GATHERING>ANALYZING',
      'ANALYZING>HYPOTHESIZING',
      'HYPOTHESIZING>TESTING',
    ]);
  });

  it('does not reopen testing once a plan is approved: RESOLVING leads back only through a fix report', () => {
    const decision = decide(session('RESOLVING'), workflow(), message('hypothesis 2'), context());
    expect(decision).toMatchObject({ kind: 'hold', hold: { state: 'RESOLVING' } });
    expect(decision.kind === 'hold' && decision.text).toMatch(/Reply `resolved` once the fix is applied/);
  });

  it('confirms into the plan review, not RESOLVING', () => {
    const tested = [
      ...triaged,
      ...evidenceFromHypothesis(classifyRequest('hypothesis 1'), { at: at(10), rootCause: env.rootCause }),
      ...evidenceFromRead(
        classifyRequest('kubectl get storageclass'),
        { outcome: 'ok' },
        { state: 'TESTING', at: at(20) },
      ),
    ];
    const decision = decide(
      session('TESTING'),
      workflow(tested, { stateEnteredAt: at(10) }),
      message('confirmed'),
      context(),
    );
    expect(decision).toMatchObject({
      kind: 'confirm',
      evidence: [{ type: 'confirmed_root_cause', code: 'PVC_PENDING' }],
    });
  });
});

describe('decide: the approved plan, step by step', () => {
  const steps = [
    {
      id: 'apply-storageclass',
      description: 'Create the StorageClass',
      command: 'kubectl apply -f storageclass-fast-ssd.yaml',
      mode: 'write' as const,
      safety: 'REQUIRES_APPROVAL' as const,
      rollback: 'kubectl delete storageclass fast-ssd',
      needs: [],
    },
    {
      id: 'delete-pvc-data-db-0',
      description: 'Recreate the claim',
      command: 'kubectl delete pvc data-db-0 -n payments',
      mode: 'write' as const,
      safety: 'DANGEROUS' as const,
      rollback: 'kubectl apply -f pvc-data-db-0.yaml -n payments',
      needs: ['apply-storageclass'],
    },
  ];
  const plan: LoadedPlan = { id: 'P1', title: 'Create the StorageClass', approvedBy: 'U2', steps };
  const resolving = [...triaged, ...evidenceFromPlan({ id: 'P1', steps }, at(30))];

  it('answers each step from the plan, in order, without a panic signal', () => {
    const first = decide(
      session('RESOLVING'),
      workflow(resolving, { approvedPlanId: 'P1' }),
      message('kubectl apply -f storageclass-fast-ssd.yaml'),
      context({ plan }),
    );
    expect(first).toMatchObject({
      kind: 'change',
      answer: { matched: true, step: { id: 'apply-storageclass' } },
      followed: { planStep: { stepIndex: 0, inOrder: true } },
      gate: { signals: [] },
    });
    const afterFirst = workflow(resolving, {
      approvedPlanId: 'P1',
      planProgress: { planId: 'P1', completed: [0] },
      recentRequests: [
        { request: { ...classifyRequest('kubectl apply -f storageclass-fast-ssd.yaml') }, at: at(55), planStep: 0 },
      ],
    });
    const second = decide(
      session('RESOLVING'),
      afterFirst,
      message('kubectl delete pvc data-db-0 -n payments'),
      context({ plan }),
    );
    expect(second).toMatchObject({
      kind: 'change',
      answer: { matched: true, step: { id: 'delete-pvc-data-db-0' } },
      followed: { planStep: { stepIndex: 1, inOrder: true } },
      gate: { signals: [] },
    });
  });

  it("refuses a change off the plan in RESOLVING with the plan's changes, and never as panic", () => {
    const decision = decide(
      session('RESOLVING'),
      workflow(resolving, { approvedPlanId: 'P1' }),
      message('kubectl scale deploy/api --replicas=0 -n payments'),
      context({ plan }),
    );
    expect(decision).toMatchObject({
      kind: 'off-plan',
      gate: { allowed: false, code: 'CHANGE_OUT_OF_PLAN', signals: [] },
      followed: { outOfPlan: true },
      answer: { matched: false },
    });
    expect(decision.kind === 'off-plan' && decision.answer.message).toMatch(
      /is not a step of the approved plan[\s\S]*step 1: `kubectl apply -f storageclass-fast-ssd.yaml`/,
    );
  });

  it('answers "restart it" after a refused off-plan change from the plan, with no rush counted', () => {
    const restartPlan: LoadedPlan = {
      id: 'P2',
      title: 'Restart the API',
      approvedBy: 'U2',
      steps: [
        {
          id: 'rollout-restart-deployment-api',
          description: 'Restart the API',
          command: 'kubectl rollout restart deployment/api -n payments',
          mode: 'write',
          safety: 'REQUIRES_APPROVAL',
          rollback: 'kubectl rollout undo deployment/api -n payments',
          needs: [],
        },
      ],
    };
    const afterRefusal = workflow([...triaged, ...evidenceFromPlan({ id: 'P2', steps: restartPlan.steps }, at(30))], {
      approvedPlanId: 'P2',
      recentRequests: [
        {
          request: { ...classifyRequest('kubectl delete pod api-1 -n payments') },
          at: at(58),
          outOfPlan: true,
        },
      ],
    });
    const decision = decide(session('RESOLVING'), afterRefusal, message('restart it'), context({ plan: restartPlan }));
    expect(decision).toMatchObject({
      kind: 'change',
      answer: { matched: true, step: { id: 'rollout-restart-deployment-api' } },
      gate: { signals: [] },
    });
  });

  it('still calls a rush before RESOLVING a rush', () => {
    const recent = workflow(resolving, {
      approvedPlanId: 'P1',
      recentRequests: [
        { request: { ...classifyRequest('kubectl scale deploy/api --replicas=0 -n payments') }, at: at(55) },
      ],
    });
    const decision = decide(
      session('HYPOTHESIZING'),
      recent,
      message('kubectl rollout restart deploy/api -n payments'),
      context({ plan }),
    );
    expect(decision.kind).toBe('panic');
  });

  it('does not count the reads it suggested as jumping between areas', () => {
    const wandering = workflow(triaged, {
      recentRequests: [
        { request: { ...classifyRequest('kubectl get ingress -n payments') }, at: at(40) },
        { request: { ...classifyRequest('kubectl get resourcequota -n payments') }, at: at(45) },
      ],
    });
    // networking, platform, then the incident's storage: three areas.
    const own = decide(session('HYPOTHESIZING'), wandering, message('kubectl get pv'), context());
    expect(own.kind === 'read' && own.gate.signals.map((x) => x.type)).toEqual(['jumping_between_domains']);
    // `kubectl get storageclass` is the envelope's own next action: following it is no jump.
    const suggested = decide(session('HYPOTHESIZING'), wandering, message('kubectl get storageclass'), context());
    expect(suggested).toMatchObject({ kind: 'read', followed: { guided: true }, gate: { signals: [] } });
  });
});

describe('decide: an open specialist proposal blocks nothing but changes', () => {
  const open = {
    pendingHandoff: { approvalId: 'ho-1', domain: 'compute', expiresAt: at(3600) },
    handoffDomainsProposed: ['compute'],
  };

  it('answers reads and questions, holds a change, and points a repeated ask at the buttons', () => {
    const w = workflow(triaged, open);
    expect(decide(session('HYPOTHESIZING'), w, message('kubectl get pods'), context()).kind).toBe('read');
    expect(decide(session('HYPOTHESIZING'), w, message('have we seen this before?'), context()).kind).toBe('memory');
    expect(
      decide(session('HYPOTHESIZING'), w, message('kubectl rollout restart deploy/api -n payments'), context()),
    ).toEqual({ kind: 'held', domain: 'compute' });
    expect(
      decide(session('HYPOTHESIZING'), w, message('Ask the compute specialist to look at the nodes'), context()),
    ).toMatchObject({ kind: 'handoff-open', domain: 'compute' });
  });

  it('takes the proposal’s own buttons and tells a stale one', () => {
    const w = workflow(triaged, open);
    const button = (approvalId: string, decision: 'approve' | 'deny') =>
      message('yes', { kind: 'button', data: { action: { type: 'handoff', approvalId, decision } } });
    expect(decide(session('HYPOTHESIZING'), w, button('ho-1', 'approve'), context())).toEqual({
      kind: 'handoff-decided',
      approve: true,
      domain: 'compute',
      approvalId: 'ho-1',
    });
    expect(decide(session('HYPOTHESIZING'), w, button('ho-0', 'deny'), context())).toMatchObject({
      kind: 'stale-hypothesis',
      text: expect.stringMatching(/no longer open/),
    });
  });
});

describe('decide: guidance that fits what was asked', () => {
  it('refuses a Secret read as such, even when the areas already jumped, and raises no signal', () => {
    const wandering = workflow(triaged, {
      recentRequests: [
        { request: { ...classifyRequest('kubectl get ingress -n payments') }, at: at(40) },
        { request: { ...classifyRequest('kubectl get resourcequota -n payments') }, at: at(45) },
      ],
      panicHistory: [
        {
          type: 'jumping_between_domains',
          severity: 'medium',
          at: at(46),
          description: 'jumped',
          evidence: {},
        },
      ],
    });
    const decision = decide(
      session('HYPOTHESIZING'),
      wandering,
      message('kubectl get secret db-creds -n payments'),
      context(),
    );
    expect(decision).toMatchObject({ kind: 'refuse', gate: { code: 'READ_REFUSED_SECRETS', signals: [] } });
  });

  it('calls a change run as system:admin privilege escalation, not destroying something unknown', () => {
    const decision = decide(
      session('TESTING'),
      workflow(),
      message('kubectl delete pod db-0 -n payments --as=system:admin'),
      context(),
    );
    expect(decision.kind).toBe('panic');
    const types = decision.kind === 'panic' ? decision.gate.signals.map((s) => s.type) : [];
    expect(types).toContain('escalating_permissions');
    expect(types).not.toContain('destructive_without_evidence');
    expect(decision.kind === 'panic' && decision.gate.guidance).toMatch(/Reaching for more permissions/);
    expect(decision.kind === 'panic' && decision.gate.guidance).not.toMatch(/destroy/);
  });

  it('tells a Test click held in GATHERING where the session stands, not to wait before making changes', () => {
    const decision = decide(
      session('GATHERING'),
      workflow(evidenceFromEnvelope(env, at(1))),
      message('test', { kind: 'button', data: { action: { type: 'hypothesis', hypothesisId: 'h1' } } }),
      context(),
    );
    expect(decision.kind).toBe('hold');
    expect(guidanceText(session('GATHERING'), workflow())).not.toMatch(/before making changes/);
  });
});
