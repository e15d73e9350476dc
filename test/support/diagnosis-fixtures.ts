import { classifyRequest } from '../../src/diagnosis/commands/index.js';
import { type EvidenceItem, mergeEvidence, type WorkflowSnapshot } from '../../src/diagnosis/evidence.js';
import {
  evidenceFromConfirmation,
  evidenceFromEnvelope,
  evidenceFromHypothesis,
  evidenceFromMemorySearch,
} from '../../src/diagnosis/evidence-sources.js';
import { advance } from '../../src/diagnosis/transitions.js';
import type { TriageEnvelope } from '../../src/triage/envelope/envelope.js';
import { type Finding, type FindingInput, FindingSchema } from '../../src/triage/envelope/findings.js';

export function finding(input: Partial<FindingInput> & Pick<FindingInput, 'code' | 'resource'>): Finding {
  return FindingSchema.parse({
    analyzer: 'test',
    domain: 'compute',
    severity: 'high',
    message: `${input.code} on ${input.resource.kind} ${input.resource.name}`,
    evidence: [],
    confidence: 0.8,
    ...input,
  });
}

/** The PVC-pending incident: a claim waits for a missing StorageClass, its pod cannot schedule, a consumer crashes. */
export function pvcIncidentFindings(): Finding[] {
  return [
    finding({
      code: 'PVC_PENDING',
      domain: 'storage',
      severity: 'critical',
      resource: { kind: 'PersistentVolumeClaim', name: 'data-db-0', namespace: 'payments' },
      related: [{ kind: 'StorageClass', name: 'fast-ssd' }],
      message: 'PVC data-db-0 is Pending: storageclass.storage.k8s.io "fast-ssd" not found',
      evidence: ['ProvisioningFailed: storageclass.storage.k8s.io "fast-ssd" not found'],
      confidence: 0.95,
    }),
    finding({
      code: 'POD_UNSCHEDULABLE',
      resource: { kind: 'Pod', name: 'db-0', namespace: 'payments' },
      related: [{ kind: 'PersistentVolumeClaim', name: 'data-db-0' }],
      message: 'Pod db-0 is unschedulable: pod has unbound immediate PersistentVolumeClaims',
      evidence: ['FailedScheduling: 0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims'],
    }),
    finding({
      code: 'CRASH_LOOP',
      resource: { kind: 'Pod', name: 'api-7f9c-abcde', namespace: 'payments' },
      related: [{ kind: 'Pod', name: 'db-0' }],
      message: 'Pod api-7f9c-abcde is in CrashLoopBackOff: connection refused to db-0',
      evidence: ['dial tcp 10.0.0.12:5432: connect: connection refused'],
      confidence: 0.7,
    }),
  ];
}

export function envelope(overrides: Partial<TriageEnvelope> = {}): TriageEnvelope {
  const findings = overrides.findings ?? pvcIncidentFindings();
  return {
    schemaVersion: 1,
    routing: {
      intent: 'pvc-binding',
      templateId: 'pvc-binding',
      domain: 'storage',
      namespace: 'payments',
      bounded: true,
      stepBudget: 3,
      triggerMode: 'replace',
      intentConfidence: 1,
      why: 'explicit intent',
    },
    rubrics: { safety: 'ALLOW', priority: 'P2', confidence: 'High' },
    summary: 'PVC data-db-0 is Pending',
    evidence: {
      completeness: 0.9,
      threshold: 0.8,
      present: ['pods', 'events', 'persistentvolumeclaims', 'storageclasses', 'logs'],
      missing: [],
      gaps: [],
    },
    findings,
    rootCause: [
      {
        rank: 1,
        code: 'PVC_PENDING',
        summary: 'StorageClass fast-ssd does not exist',
        confidence: 0.9,
        resource: { kind: 'PersistentVolumeClaim', name: 'data-db-0', namespace: 'payments' },
      },
      {
        rank: 2,
        code: 'POD_UNSCHEDULABLE',
        summary: 'Pod db-0 waits for its claim',
        confidence: 0.5,
        resource: { kind: 'Pod', name: 'db-0', namespace: 'payments' },
      },
    ],
    nextActions: [
      {
        command: 'kubectl get storageclass',
        type: 'read-only',
        safety: 'SAFE',
        description: 'List storage classes',
      },
    ],
    promptSuggestions: [],
    execution: {
      stepsExecuted: 3,
      stepBudget: 3,
      requests: 6,
      durationMs: 1200,
      timedOut: false,
      now: '2025-08-10T04:00:00.000Z',
    },
    ...overrides,
  };
}

const T0 = Date.parse('2025-08-10T04:00:00.000Z');
export const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();
export const when = (seconds: number) => new Date(T0 + seconds * 1000);

/** Adds evidence to a session as the workflow does, then lets the state machine move on from it. */
export function advanceWith(snapshot: WorkflowSnapshot, items: EvidenceItem[], time: string) {
  return advance({ ...snapshot, evidence: mergeEvidence(snapshot.evidence, items) }, time);
}

/**
 * The evidence of a session whose first hypothesis, the envelope's root cause, was confirmed: triage at `at(1)`, the
 * memory search at `at(10)`, the hypothesis at `at(20)` and the confirmation at `at(40)`.
 */
export function confirmedRootCauseEvidence(env: TriageEnvelope = envelope()): EvidenceItem[] {
  const evidence = [
    ...evidenceFromEnvelope(env, at(1)),
    ...evidenceFromMemorySearch([], at(10)),
    ...evidenceFromHypothesis(classifyRequest('hypothesis 1'), { at: at(20), rootCause: env.rootCause }),
  ];
  return [...evidence, ...evidenceFromConfirmation(classifyRequest('confirmed'), evidence, at(40))];
}
