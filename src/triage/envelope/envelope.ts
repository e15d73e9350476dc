import * as z from 'zod';
import { READ_FAILURE_REASONS } from '../../cluster/types.js';
import { DomainSchema, FindingSchema, ResourceRefSchema } from './findings.js';

/** The triage envelope (ADR-023, docs/concepts.md) plus calmops' findings and ranked root cause. This schema is the contract. */

const TriggerModeSchema = z.enum(['replace', 'suggest', 'observe']);
export type TriggerMode = z.infer<typeof TriggerModeSchema>;

export const SafetyLabelSchema = z.enum(['SAFE', 'REQUIRES_APPROVAL', 'DANGEROUS']);
export type SafetyLabel = z.infer<typeof SafetyLabelSchema>;

const SafetyClassifiedActionSchema = z.object({
  command: z.string(),
  type: z.enum(['read-only', 'mutating']),
  safety: SafetyLabelSchema,
  description: z.string(),
  rationale: z.string().optional(),
});
export type SafetyClassifiedAction = z.infer<typeof SafetyClassifiedActionSchema>;

const EvidenceGapSchema = z.object({
  /** Evidence type id from the template (e.g. `events`, `storageclasses`). */
  type: z.string(),
  reason: z.enum([...READ_FAILURE_REASONS, 'step-budget', 'not-observed']),
  detail: z.string(),
});
export type EvidenceGap = z.infer<typeof EvidenceGapSchema>;

/** Something that fails because of a root cause, and the evidence that ties it to that cause. */
const ImpactSchema = z.object({
  resource: ResourceRefSchema,
  code: z.string(),
  summary: z.string(),
  /** The lines that tie the casualty to its cause (the refused connection, the pod waiting on the claim). */
  evidence: z.array(z.string()),
});
export type Impact = z.infer<typeof ImpactSchema>;

/** Another place the fault could be fixed, offered beside the cause (the Deployment's limit beside the LimitRange). */
const AlternativeFixSchema = z.object({ resource: ResourceRefSchema, change: z.string() });
export type AlternativeFix = z.infer<typeof AlternativeFixSchema>;

const RankedCauseSchema = z.object({
  rank: z.number().int().min(1),
  code: z.string(),
  summary: z.string(),
  confidence: z.number().min(0).max(1),
  /** The entity to change. */
  resource: ResourceRefSchema,
  /** From the entity to change to where the symptom shows (owner → pod, policy → service → pod). */
  chain: z.array(ResourceRefSchema).optional(),
  /**
   * What to change in `resource` to end the incident. Always set by this version; optional so that envelopes stored
   * before it still parse.
   */
  change: z.string().optional(),
  /** What fails because of this cause: never causes themselves. Always set by this version (possibly empty). */
  impact: z.array(ImpactSchema).optional(),
  /** Other legitimate places to fix it; the cause stays the object whose constraint decides. */
  alternatives: z.array(AlternativeFixSchema).optional(),
});
export type RankedCause = z.infer<typeof RankedCauseSchema>;

export const TriageEnvelopeSchema = z.object({
  schemaVersion: z.literal(1),
  routing: z.object({
    intent: z.string(),
    templateId: z.string(),
    domain: DomainSchema,
    namespace: z.string(),
    cluster: z.string().optional(),
    bounded: z.boolean(),
    stepBudget: z.number().int().min(1).max(5),
    triggerMode: TriggerModeSchema,
    /** How sure the entry dictionary was of the intent (1 when the intent was given explicitly). */
    intentConfidence: z.number().min(0).max(1),
    why: z.string(),
  }),
  rubrics: z.object({
    safety: z.enum(['ALLOW', 'REQUIRES_APPROVAL', 'BLOCK']),
    priority: z.enum(['P1', 'P2', 'P3', 'P4']),
    confidence: z.enum(['Low', 'Medium', 'High']),
  }),
  summary: z.string(),
  evidence: z.object({
    completeness: z.number().min(0).max(1),
    threshold: z.number().min(0).max(1),
    present: z.array(z.string()),
    missing: z.array(z.string()),
    /** Why each missing evidence type is missing: the API said no, it timed out, the budget ran out, … */
    gaps: z.array(EvidenceGapSchema),
    infrastructure: z.record(z.string(), z.unknown()).optional(),
    workloads: z.record(z.string(), z.unknown()).optional(),
    storage: z.record(z.string(), z.unknown()).optional(),
    networking: z.record(z.string(), z.unknown()).optional(),
  }),
  findings: z.array(FindingSchema),
  rootCause: z.array(RankedCauseSchema),
  nextActions: z.array(SafetyClassifiedActionSchema),
  promptSuggestions: z.array(z.string()),
  execution: z.object({
    stepsExecuted: z.number().int().min(0),
    stepBudget: z.number().int().min(1).max(5),
    requests: z.number().int().min(0),
    durationMs: z.number().min(0),
    timedOut: z.boolean(),
    /** The instant the analysis treated as "now" (`--now`, or the newest timestamp in a snapshot). */
    now: z.string(),
  }),
});
export type TriageEnvelope = z.infer<typeof TriageEnvelopeSchema>;
