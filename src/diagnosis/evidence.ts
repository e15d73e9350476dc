import * as z from 'zod';
import type { TriageEnvelope } from '../triage/envelope.js';
import { type ResourceRef, ResourceRefSchema, type Severity, SeveritySchema } from '../triage/findings.js';
import { resourceKey } from './blackboard.js';
import { canonicalKind, isClusterScoped, kindLabel } from './kinds.js';
import type { RequestTarget, UserRequest } from './request.js';
import {
  type DiagnosticState,
  type EvidenceRequirement,
  type EvidenceType,
  EvidenceTypeSchema,
  evidenceLabel,
  STATE_MACHINE,
} from './state-machine.js';

/**
 * Evidence a session accumulates: from triage envelopes, from the reads users ask for, from the memory search,
 * from hypotheses and confirmations in the thread, and from the approved plan. Items carry a stable id, so seeing
 * the same symptom twice refreshes it instead of counting it twice.
 */
export const EvidenceItemSchema = z.object({
  id: z.string().min(1),
  type: EvidenceTypeSchema,
  description: z.string(),
  source: z.enum(['envelope', 'user-read', 'memory', 'user', 'plan']),
  resource: ResourceRefSchema.optional(),
  /**
   * The entity to change behind a symptom's resource (the Deployment behind its pod). A confirmed root cause names
   * it, and a fix replaces the pods, so a fix validation also looks for the fault there.
   */
  owner: ResourceRefSchema.optional(),
  /** Finding or root-cause code the item is about. */
  code: z.string().optional(),
  /** The severity of the finding a symptom came from: a fix is judged on what is medium or worse. */
  severity: SeveritySchema.optional(),
  /** On the item recording a triage run: how complete its evidence was, against the template's threshold. */
  completeness: z.object({ value: z.number().min(0).max(1), threshold: z.number().min(0).max(1) }).optional(),
  at: z.iso.datetime({ offset: true }),
});
export type EvidenceItem = z.infer<typeof EvidenceItemSchema>;

export function describeResource(ref: ResourceRef): string {
  const ns = ref.namespace && !isClusterScoped(ref.kind) ? `${ref.namespace}/` : '';
  return `${kindLabel(ref.kind)} ${ns}${ref.name}`;
}

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

export function latest(evidence: readonly EvidenceItem[], type: EvidenceType): EvidenceItem | undefined {
  let best: EvidenceItem | undefined;
  for (const item of evidence) if (item.type === type && (!best || item.at >= best.at)) best = item;
  return best;
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

/** Adds items, replacing any with the same id: a re-observed symptom keeps one entry with its newest time. */
export function mergeEvidence(existing: readonly EvidenceItem[], incoming: readonly EvidenceItem[]): EvidenceItem[] {
  const byId = new Map(existing.map((e) => [e.id, e]));
  for (const item of incoming) {
    const prior = byId.get(item.id);
    if (!prior || item.at >= prior.at) byId.set(item.id, item);
  }
  return [...byId.values()];
}

export function countEvidence(evidence: readonly EvidenceItem[], requirement: EvidenceRequirement): number {
  const floor = requirement.newerThan ? latest(evidence, requirement.newerThan)?.at : undefined;
  const have = evidence.filter(
    (e) =>
      e.type === requirement.type &&
      (!floor || e.at >= floor) &&
      (requirement.source === undefined || e.source === requirement.source),
  ).length;
  const kinds = requirement.orKinds;
  if (!kinds || have === 0 || have >= requirement.minCount) return have;
  // The record of a triage run says that it ran, not how the fault shows: it is no kind of evidence about the fault.
  const seen = new Set(
    evidence.filter((e) => kinds.includes(e.type) && !e.id.startsWith('triage:')).map((e) => e.type),
  );
  return Math.max(have, seen.size);
}

export interface EvidenceGapItem extends EvidenceRequirement {
  have: number;
  label: string;
}

/** What the state still needs before the session may move on. */
export function missingEvidence(state: DiagnosticState, evidence: readonly EvidenceItem[]): EvidenceGapItem[] {
  return STATE_MACHINE[state].exitRequirements
    .map((r) => ({ ...r, have: countEvidence(evidence, r), label: evidenceLabel(r.type) }))
    .filter((r) => r.have < r.minCount);
}

/** How complete the evidence is, against the threshold that makes it complete enough. */
export interface EvidenceFigure {
  value: number;
  threshold: number;
}

/**
 * The one evidence figure of a session: how much of what its template needs the latest triage could read (ADR-023's
 * completeness, against the template's threshold). The envelope shows it, `/triage status` shows it, and the plan
 * review and fix validation judge by it. Where the session stands in the workflow is a different question, answered
 * by the state and what it still needs (`missingEvidence`), never by a second percentage.
 */
export function evidenceFigure(evidence: readonly EvidenceItem[]): EvidenceFigure | undefined {
  let triage: EvidenceItem | undefined;
  for (const e of evidence) {
    if (e.completeness !== undefined && e.id.startsWith('triage:') && (!triage || e.at >= triage.at)) triage = e;
  }
  return triage?.completeness ? { ...triage.completeness } : undefined;
}

export function formatMissing(gaps: readonly EvidenceGapItem[]): string {
  return gaps
    .map((g) => {
      const alternative = g.orKinds && g.minCount > 1 ? `, or one seen in ${g.minCount} kinds of evidence` : '';
      return `${g.label} (${g.have}/${g.minCount}, ${g.quality}${alternative})`;
    })
    .join(', ');
}

/** What must be gone for a fix to count: a finding code, on one resource when the resource is known. */
export const ValidationTargetSchema = z.object({ code: z.string(), resource: ResourceRefSchema.optional() });
export type ValidationTarget = z.infer<typeof ValidationTargetSchema>;

/** The fix is being validated: after RESOLVING the session re-enters GATHERING and waits for a fresh triage. */
export const ValidationContextSchema = z.object({
  /** Only a triage newer than this judges the fix. */
  startedAt: z.iso.datetime({ offset: true }),
  /** Finding codes that must be gone for the fix to count. */
  codes: z.array(z.string()),
  /** The confirmed root cause (or, without one, the original symptoms) with the resource each was seen on. */
  targets: z.array(ValidationTargetSchema).optional(),
});
export type ValidationContext = z.infer<typeof ValidationContextSchema>;

/** A finding below this severity does not keep a fix from counting: what remains is noise, not the fault. */
const BLOCKING_SEVERITIES: ReadonlySet<Severity> = new Set<Severity>(['medium', 'high', 'critical']);

function sameResource(a: ResourceRef, b: ResourceRef): boolean {
  const kind = canonicalKind(a.kind);
  if (kind !== canonicalKind(b.kind) || a.name !== b.name) return false;
  // Ranked causes sometimes carry no namespace where the finding does: a missing namespace matches any.
  return isClusterScoped(kind) || !a.namespace || !b.namespace || a.namespace === b.namespace;
}

/**
 * Whether a finding (or a symptom recorded from one) is still the fault the fix was meant to remove: one of the
 * targets' codes, on the target's resource when it has one, at medium severity or worse. A symptom recorded
 * without a severity counts, so an old record can never let a fix pass.
 */
export function isStillPresent(
  targets: readonly ValidationTarget[],
  finding: {
    code?: string | undefined;
    resource?: ResourceRef | undefined;
    owner?: ResourceRef | undefined;
    severity?: Severity | undefined;
  },
): boolean {
  if (!finding.code) return false;
  if (finding.severity !== undefined && !BLOCKING_SEVERITIES.has(finding.severity)) return false;
  const on = (target: ResourceRef) =>
    !finding.resource ||
    sameResource(target, finding.resource) ||
    (finding.owner !== undefined && sameResource(target, finding.owner));
  return targets.some((t) => t.code === finding.code && (!t.resource || on(t.resource)));
}

/** The targets of a validation, also for contexts stored before targets existed. */
export function validationTargetsOf(context: ValidationContext): ValidationTarget[] {
  return context.targets ?? context.codes.map((code) => ({ code }));
}

export function describeTarget(target: ValidationTarget): string {
  return target.resource ? `${target.code} on ${describeResource(target.resource)}` : target.code;
}

export interface WorkflowSnapshot {
  state: DiagnosticState;
  evidence: readonly EvidenceItem[];
  stateEnteredAt: string;
  validation?: ValidationContext | null;
  /**
   * Start of the current reasoning cycle. A failed validation or a panic intervention starts a new one: the
   * memory search, hypotheses, test results, confirmation and plan of the previous cycle stop counting, so the
   * session cannot slide straight back to where it went wrong. Observations (symptoms, logs, events) still count.
   */
  cycleStartedAt?: string | null;
}

/** Evidence types that belong to one reasoning cycle. */
export const CYCLE_EVIDENCE_TYPES: ReadonlySet<EvidenceType> = new Set<EvidenceType>([
  'similar_incidents',
  'hypothesis',
  'test_plan',
  'hypothesis_test_results',
  'confirmed_root_cause',
  'solution_plan',
  'rollback_plan',
  'fix_applied',
]);

/** The evidence that counts for the current cycle. */
export function currentEvidence(session: Pick<WorkflowSnapshot, 'evidence' | 'cycleStartedAt'>): EvidenceItem[] {
  const start = session.cycleStartedAt;
  if (!start) return [...session.evidence];
  return session.evidence.filter((e) => !CYCLE_EVIDENCE_TYPES.has(e.type) || e.at >= start);
}

export function supportsTarget(evidence: readonly EvidenceItem[], target: RequestTarget, namespace?: string): boolean {
  if (!target.name) return false;
  const kind = canonicalKind(target.kind);
  return evidence.some(
    (e) =>
      e.resource !== undefined &&
      canonicalKind(e.resource.kind) === kind &&
      e.resource.name === target.name &&
      (isClusterScoped(kind) || !namespace || !e.resource.namespace || e.resource.namespace === namespace),
  );
}
