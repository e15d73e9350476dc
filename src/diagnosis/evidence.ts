import * as z from 'zod';
import { ResourceRefSchema, SeveritySchema } from '../triage/envelope/index.js';
import type { ValidationContext } from './fix-validation.js';
import { canonicalKind, isClusterScoped } from './kinds.js';
import type { RequestTarget } from './request.js';
import { type DiagnosticState, type EvidenceType, EvidenceTypeSchema } from './state-machine.js';

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

/** Adds items, replacing any with the same id: a re-observed symptom keeps one entry with its newest time. */
export function mergeEvidence(existing: readonly EvidenceItem[], incoming: readonly EvidenceItem[]): EvidenceItem[] {
  const byId = new Map(existing.map((e) => [e.id, e]));
  for (const item of incoming) {
    const prior = byId.get(item.id);
    if (!prior || item.at >= prior.at) byId.set(item.id, item);
  }
  return [...byId.values()];
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
const CYCLE_EVIDENCE_TYPES: ReadonlySet<EvidenceType> = new Set<EvidenceType>([
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

/** The newest item of a type. */
export function latest(evidence: readonly EvidenceItem[], type: EvidenceType): EvidenceItem | undefined {
  let best: EvidenceItem | undefined;
  for (const item of evidence) if (item.type === type && (!best || item.at >= best.at)) best = item;
  return best;
}
