import * as z from 'zod';
import { ReadSpecSchema } from '../cluster/read-spec.js';
import { OverrideSchema } from '../diagnosis/break-glass.js';
import { EvidenceItemSchema as DiagnosisEvidenceSchema } from '../diagnosis/evidence.js';
import { ValidationContextSchema } from '../diagnosis/fix-validation.js';
import { PanicSignalSchema } from '../diagnosis/panic.js';
import { ID_MAX, KeyPart, KUBE_NAME_MAX } from '../limits.js';
import { ResourceRefSchema } from '../triage/envelope/index.js';

/**
 * What the workflow keeps about a session beyond the session item the Slack side reads: the diagnostic evidence in
 * full (with ids and resources, which the gate needs), recent requests and panic history, hypotheses with their
 * reads, the plans under review and the approvals waiting for a decision. The ArtifactRepository (artifacts.ts)
 * writes them, each by one conditional put.
 */

const HypothesisSchema = z.object({
  id: z.string().max(ID_MAX),
  rank: z.number().int().min(1),
  code: z.string().max(ID_MAX),
  summary: z.string().max(1000),
  confidence: z.number().min(0).max(1),
  resource: ResourceRefSchema,
  reads: z.array(ReadSpecSchema).max(5),
  status: z.enum(['proposed', 'testing', 'confirmed', 'rejected']).default('proposed'),
});
export type Hypothesis = z.infer<typeof HypothesisSchema>;

const RecordedRequestSchema = z.object({
  request: z.record(z.string(), z.unknown()),
  at: z.string(),
  /** calmops proposed it (a read it suggested, a handoff it offered). */
  guided: z.boolean().optional(),
  /** The approved plan's step it was, when it came in the plan's order. */
  planStep: z.number().int().min(0).optional(),
  /** A change refused in RESOLVING as no step of the approved plan: it never counts toward a rush. */
  outOfPlan: z.boolean().optional(),
});

export const WorkflowRecordSchema = z.object({
  sessionId: KeyPart,
  version: z.number().int().min(0),
  stateEnteredAt: z.string(),
  validation: ValidationContextSchema.nullable().default(null),
  cycleStartedAt: z.string().nullable().default(null),
  evidence: z.array(DiagnosisEvidenceSchema).default([]),
  recentRequests: z.array(RecordedRequestSchema).default([]),
  panicHistory: z.array(PanicSignalSchema).default([]),
  /** Keys of consumed inbox messages: a message appended twice (a retried delivery) is consumed once. */
  consumedKeys: z.array(z.string()).default([]),
  lastInboxId: z.string().optional(),
  /** When the last message was marked consumed: where a retried route step looks for its consumed event. */
  lastInboxAt: z.string().optional(),
  hypotheses: z.array(HypothesisSchema).default([]),
  activeHypothesisId: z.string().optional(),
  handoffDomainsProposed: z.array(z.string()).default([]),
  /** A specialist proposal whose buttons are still live: the thread goes on meanwhile, only changes wait. */
  pendingHandoff: z
    .object({ approvalId: z.string().max(ID_MAX), domain: z.string().max(ID_MAX), expiresAt: z.string().max(ID_MAX) })
    .nullable()
    .default(null),
  /** Changes asked for while a proposal was open, answered in order once it is decided. */
  heldChanges: z
    .array(z.object({ userId: z.string().max(ID_MAX), text: z.string().max(40_000), kind: z.string().max(16) }))
    .max(10)
    .default([]),
  reviewSeq: z.number().int().min(0).default(0),
  /** Fresh triages that judged a reported fix: 1 when the first fix held. */
  validationAttempts: z.number().int().min(0).default(0),
  currentPlanId: z.string().optional(),
  approvedPlanId: z.string().optional(),
  /** The approved plan's steps a person has been answered for: what keeps the plan's order. */
  planProgress: z
    .object({ planId: z.string(), completed: z.array(z.number().int().min(0)).max(50) })
    .nullable()
    .default(null),
  /** The break-glass override in force (or last in force), as the gate judges it. */
  override: OverrideSchema.nullable().default(null),
  /** The namespaces offered when the triage could not tell where to look, and the message that offers them. */
  namespaceChoice: z
    .object({
      candidates: z.array(z.object({ namespace: z.string().max(KUBE_NAME_MAX), why: z.string().max(300) })).max(5),
      channelId: z.string().optional(),
      messageTs: z.string().optional(),
      askedAt: z.string(),
    })
    .nullable()
    .default(null),
});
export type WorkflowRecord = z.infer<typeof WorkflowRecordSchema>;

export const PlanRecordSchema = z.object({
  sessionId: KeyPart,
  planId: z.string(),
  kind: z.enum(['plan', 'postmortem']),
  revision: z.number().int().min(0),
  status: z.enum(['draft', 'needs-human', 'approved', 'rejected', 'expired', 'postmortem-complete']),
  /** The guarded plan (valid against its contract), absent when synthesis needed a human. */
  plan: z.record(z.string(), z.unknown()).optional(),
  message: z.string().optional(),
  review: z.record(z.string(), z.unknown()).optional(),
  feedback: z.array(z.string()).default([]),
  requestId: z.string().optional(),
  decidedBy: z.string().optional(),
  createdAt: z.string(),
});
export type PlanRecord = z.infer<typeof PlanRecordSchema>;

/** Which approval a wait is about, so a timeout can expire it and update its message. */
export const PendingApprovalSchema = z.object({
  sessionId: KeyPart,
  kind: z.string(),
  approvalId: z.string(),
  channelId: z.string(),
  messageTs: z.string().optional(),
  createdAt: z.string(),
});
export type PendingApproval = z.infer<typeof PendingApprovalSchema>;
