import * as z from 'zod';
import { DomainSchema, FindingSchema, ResourceRefSchema } from './findings.js';

/** The triage envelope (ADR-023, docs/concepts.md) plus calmops' findings and ranked root cause. This schema is the contract. */

export const TriggerModeSchema = z.enum(['replace', 'suggest', 'observe']);
export type TriggerMode = z.infer<typeof TriggerModeSchema>;

export const SafetyLabelSchema = z.enum(['SAFE', 'REQUIRES_APPROVAL', 'DANGEROUS']);
export type SafetyLabel = z.infer<typeof SafetyLabelSchema>;

export const SafetyClassifiedActionSchema = z.object({
  command: z.string(),
  type: z.enum(['read-only', 'mutating']),
  safety: SafetyLabelSchema,
  description: z.string(),
  rationale: z.string().optional(),
});
export type SafetyClassifiedAction = z.infer<typeof SafetyClassifiedActionSchema>;

export const EvidenceGapSchema = z.object({
  /** Evidence type id from the template (e.g. `events`, `storageclasses`). */
  type: z.string(),
  reason: z.enum([
    'unreachable',
    'timeout',
    'forbidden',
    'unauthorized',
    'not-found',
    'server-error',
    'refused-by-policy',
    'invalid',
    'step-budget',
    'not-observed',
  ]),
  detail: z.string(),
});
export type EvidenceGap = z.infer<typeof EvidenceGapSchema>;

export const RankedCauseSchema = z.object({
  rank: z.number().int().min(1),
  code: z.string(),
  summary: z.string(),
  confidence: z.number().min(0).max(1),
  /** The entity to change. */
  resource: ResourceRefSchema,
  /** From the entity to change to where the symptom shows (owner → pod, policy → service → pod). */
  chain: z.array(ResourceRefSchema).optional(),
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
