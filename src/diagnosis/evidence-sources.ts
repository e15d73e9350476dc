import type { ResourceRef, TriageEnvelope } from '../triage/envelope/index.js';
import { resourceKey } from './blackboard.js';
import type { EvidenceItem } from './evidence.js';
import { latest } from './evidence.js';
import { canonicalKind } from './kinds.js';
import type { RequestTarget, UserRequest } from './request.js';
import { describeResource } from './resource-text.js';
import type { DiagnosticState, EvidenceType } from './state-machine.js';

/** Where evidence comes from: envelopes, reads, the memory search, the thread and the approved plan. */

const isLogType = (type: string) => /log/i.test(type);
const isEventType = (type: string) => /event/i.test(type);

/** Everything an envelope proves, as evidence items. Always includes one item recording the triage run itself. */
export function evidenceFromEnvelope(
  envelope: Pick<TriageEnvelope, 'findings' | 'rootCause' | 'evidence' | 'execution'>,
  at: string,
): EvidenceItem[] {
  const items: EvidenceItem[] = [
    {
      id: `triage:${at}`,
      type: 'observations',
      description: `Triage read the cluster: ${envelope.findings.length} finding(s), evidence completeness ${Math.round(
        envelope.evidence.completeness * 100,
      )}%`,
      source: 'envelope',
      completeness: { value: envelope.evidence.completeness, threshold: envelope.evidence.threshold },
      at,
    },
  ];
  const resources = new Map<string, ResourceRef>();
  for (const finding of envelope.findings) {
    const key = resourceKey(finding.resource);
    items.push({
      id: `symptom:${finding.code}:${key}`,
      type: 'symptoms',
      description: `${finding.code} on ${describeResource(finding.resource)}: ${finding.message}`,
      source: 'envelope',
      resource: finding.resource,
      ...(finding.owner
        ? { owner: { ...finding.owner, namespace: finding.owner.namespace ?? finding.resource.namespace } }
        : {}),
      code: finding.code,
      severity: finding.severity,
      at,
    });
    resources.set(key, finding.resource);
    for (const related of finding.related ?? []) {
      const ref = { ...related, namespace: related.namespace ?? finding.resource.namespace };
      resources.set(resourceKey(ref), ref);
    }
  }
  for (const [key, ref] of resources) {
    items.push({
      id: `resource:${key}`,
      type: 'affected_resources',
      description: describeResource(ref),
      source: 'envelope',
      resource: ref,
      at,
    });
  }
  for (const type of envelope.evidence.present) {
    const evidenceType: EvidenceType = isLogType(type) ? 'logs' : isEventType(type) ? 'events' : 'observations';
    items.push({
      id: `read:${type}`,
      type: evidenceType,
      description: `Triage read ${type}`,
      source: 'envelope',
      at,
    });
  }
  const top = envelope.rootCause[0];
  if (top) {
    items.push({
      id: `pattern:${envelope.rootCause.map((c) => c.code).join(',')}`,
      type: 'pattern_analysis',
      description: `Ranked ${envelope.rootCause.length} candidate cause(s); most likely ${top.code} (${Math.round(
        top.confidence * 100,
      )}%): ${top.summary}`,
      source: 'envelope',
      code: top.code,
      resource: top.resource,
      at,
    });
  }
  return items;
}

function refFromTarget(target: RequestTarget | undefined, namespace: string | undefined): ResourceRef | undefined {
  if (!target?.name) return undefined;
  return { kind: target.kind, name: target.name, namespace };
}

export interface ReadOutcome {
  /** `empty` counts: "no logs, the container never started" is evidence too. `failed` does not. */
  outcome: 'ok' | 'empty' | 'failed';
  summary?: string;
}

/** Evidence from a read the user asked for and calmops ran. In TESTING every read also tests the hypothesis. */
export function evidenceFromRead(
  request: UserRequest,
  result: ReadOutcome,
  context: { state: DiagnosticState; at: string },
): EvidenceItem[] {
  if (request.kind !== 'read' || result.outcome === 'failed') return [];
  const resource = refFromTarget(request.resource, request.namespace);
  const what = `${request.verb}${request.resource ? ` ${request.resource.kind}${request.resource.name ? `/${request.resource.name}` : ''}` : ''}`;
  const description = result.summary ? `${what}: ${result.summary}` : what;
  const key = `${what}${request.namespace ? `@${request.namespace}` : ''}`;
  const type: EvidenceType =
    request.verb === 'logs'
      ? 'logs'
      : request.verb === 'events'
        ? 'events'
        : request.verb === 'search-memory'
          ? 'similar_incidents'
          : 'observations';
  const items: EvidenceItem[] = [
    { id: `user-read:${type}:${key}`, type, description, source: 'user-read', resource, at: context.at },
  ];
  // `describe` prints the object's events; a read of a named object confirms it is affected.
  if (request.verb === 'describe') {
    items.push({
      id: `user-read:events:${key}`,
      type: 'events',
      description,
      source: 'user-read',
      resource,
      at: context.at,
    });
  }
  if (context.state === 'TESTING') {
    items.push({
      id: `test:${key}:${context.at}`,
      type: 'hypothesis_test_results',
      description,
      source: 'user-read',
      resource,
      at: context.at,
    });
  }
  return items;
}

/** A memory search counts even when it finds nothing: "we have not seen this before" is a result. */
export function evidenceFromMemorySearch(
  matches: ReadonlyArray<{ id: string; explanation: string }>,
  at: string,
): EvidenceItem[] {
  const best = matches[0];
  return [
    {
      id: `memory:${at}`,
      type: 'similar_incidents',
      description:
        matches.length === 0
          ? 'Searched past incidents: no similar incident found'
          : `Searched past incidents: ${matches.length} similar; closest ${best?.id} (${best?.explanation})`,
      source: 'memory',
      at,
    },
  ];
}

export interface RankedCauseLike {
  rank: number;
  code: string;
  summary: string;
  resource: ResourceRef;
}

export interface NextActionLike {
  command: string;
  type: 'read-only' | 'mutating';
}

/**
 * A hypothesis from the thread ("hypothesis 2" picks a ranked cause; free text is kept as written), with the
 * plan to test it: the envelope's read-only next actions, or a describe of the suspected object.
 */
export function evidenceFromHypothesis(
  request: UserRequest,
  context: { at: string; rootCause?: readonly RankedCauseLike[]; nextActions?: readonly NextActionLike[] },
): EvidenceItem[] {
  if (request.kind !== 'hypothesis') return [];
  const cause = request.hypothesisRank ? context.rootCause?.find((c) => c.rank === request.hypothesisRank) : undefined;
  if (request.hypothesisRank && !cause) return [];
  const text = cause ? `#${cause.rank} ${cause.code}: ${cause.summary}` : (request.hypothesisText ?? request.raw);
  const reads = (context.nextActions ?? []).filter((a) => a.type === 'read-only').map((a) => a.command);
  const plan =
    reads.length > 0
      ? reads.slice(0, 3)
      : cause
        ? [
            `kubectl describe ${canonicalKind(cause.resource.kind)} ${cause.resource.name}${cause.resource.namespace ? ` -n ${cause.resource.namespace}` : ''}`,
          ]
        : ['Read the events and logs of the affected resources'];
  return [
    {
      id: `hypothesis:${cause?.code ?? text}`,
      type: 'hypothesis',
      description: text,
      source: 'user',
      code: cause?.code,
      resource: cause?.resource,
      at: context.at,
    },
    {
      id: `test-plan:${cause?.code ?? text}`,
      type: 'test_plan',
      description: `Test by: ${plan.join('; ')}`,
      source: 'user',
      code: cause?.code,
      at: context.at,
    },
  ];
}

/** "Confirmed" confirms the hypothesis under test; without one there is nothing to confirm. */
export function evidenceFromConfirmation(
  request: UserRequest,
  evidence: readonly EvidenceItem[],
  at: string,
): EvidenceItem[] {
  if (request.kind !== 'confirm-root-cause') return [];
  const hypothesis = latest(evidence, 'hypothesis');
  if (!hypothesis) return [];
  return [
    {
      id: `root-cause:${hypothesis.code ?? hypothesis.description}`,
      type: 'confirmed_root_cause',
      description: `Root cause confirmed: ${hypothesis.description}`,
      source: 'user',
      code: hypothesis.code,
      resource: hypothesis.resource,
      at,
    },
  ];
}

export interface PlanLike {
  id: string;
  title?: string;
  steps: ReadonlyArray<{ id: string; mode: 'read' | 'write'; command: string; rollback?: string }>;
}

/** An approved plan is the solution plan; it is also the rollback plan when every write step can be rolled back. */
export function evidenceFromPlan(plan: PlanLike, at: string): EvidenceItem[] {
  const writes = plan.steps.filter((s) => s.mode === 'write');
  const items: EvidenceItem[] = [
    {
      id: `plan:${plan.id}`,
      type: 'solution_plan',
      description: `Approved plan ${plan.title ?? plan.id}: ${plan.steps.length} step(s), ${writes.length} change(s)`,
      source: 'plan',
      at,
    },
  ];
  if (writes.every((s) => Boolean(s.rollback?.trim()))) {
    items.push({
      id: `rollback:${plan.id}`,
      type: 'rollback_plan',
      description: `Rollback ready for ${writes.length} change(s)`,
      source: 'plan',
      at,
    });
  }
  return items;
}

/** Who reported it is on the timeline event; the evidence says what, so it reads the same wherever it is shown. */
export function evidenceFromResolved(request: UserRequest, at: string): EvidenceItem[] {
  if (request.kind !== 'resolved') return [];
  return [
    {
      id: `fix:${at}`,
      type: 'fix_applied',
      description: `Reported resolved: ${request.raw}`,
      source: 'user',
      at,
    },
  ];
}
