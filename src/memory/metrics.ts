import * as z from 'zod';
import { byCodePoint } from '../code-point-order.js';
import type { BreakGlassAuditEntry } from '../diagnosis/break-glass.js';
import {
  PANIC_TYPES,
  type PanicSeverity,
  PanicSeveritySchema,
  type PanicSignal,
  type PanicType,
  PanicTypeSchema,
} from '../diagnosis/panic.js';
import { SUMMARY_MAX } from '../limits.js';

/**
 * ADR-005's success metrics, computed from plain lists: session summaries and timeline events, as the store lists
 * them. The event builders below define the timeline entries the metrics read, so writer and reader agree.
 */

const METRIC_EVENTS = {
  panicSignal: 'panic.signal',
  memoryMatchUsed: 'memory.match-used',
  fixValidated: 'fix.validated',
  breakGlassPrefix: 'break-glass.',
} as const;

/** The shape the store's timeline append takes. */
export interface MetricTimelineEvent {
  type: string;
  actor: string;
  summary: string;
  data: Record<string, unknown>;
}

export function panicSignalEvent(signal: PanicSignal, blocked: boolean): MetricTimelineEvent {
  return {
    type: METRIC_EVENTS.panicSignal,
    actor: 'calmops',
    summary: `${signal.type} (${signal.severity})${blocked ? ', request blocked' : ''}: ${signal.description}`.slice(
      0,
      SUMMARY_MAX,
    ),
    data: { signalType: signal.type, severity: signal.severity, blocked, at: signal.at },
  };
}

export function memoryMatchUsedEvent(memoryId: string, score: number, actor: string): MetricTimelineEvent {
  return {
    type: METRIC_EVENTS.memoryMatchUsed,
    actor,
    summary: `Used similar incident ${memoryId} (score ${score})`,
    data: { memoryId, score },
  };
}

export function fixValidatedEvent(passed: boolean, reason: string): MetricTimelineEvent {
  return {
    type: METRIC_EVENTS.fixValidated,
    actor: 'calmops',
    summary: reason.slice(0, SUMMARY_MAX),
    data: { passed },
  };
}

export function breakGlassEvent(entry: BreakGlassAuditEntry): MetricTimelineEvent {
  return {
    type: `${METRIC_EVENTS.breakGlassPrefix}${entry.event}`,
    actor: entry.actor,
    summary: `Break-glass ${entry.event}${entry.skipToState ? ` (skip to ${entry.skipToState})` : ''}${
      typeof entry.details['request'] === 'string'
        ? `: ${entry.details['request']}${entry.details['allowed'] === false ? ' (refused)' : ''}`
        : entry.change
          ? ` for ${entry.change}`
          : ''
    }`.slice(0, SUMMARY_MAX),
    data: { ...entry },
  };
}

export interface SessionSummaryInput {
  id: string;
  status: string;
  createdAt: string;
  /** When the session was resolved; `closedAt` is used when absent. */
  resolvedAt?: string;
  closedAt?: string;
  memoryMatchIds?: readonly string[];
  /** Workflow evidence completeness at resolution (0..1); `evidence.completeness` is used when absent. */
  evidenceCompleteness?: number;
  evidence?: { completeness?: number };
}

export interface TimelineEventLike {
  sessionId: string;
  at: string;
  type: string;
  data?: Record<string, unknown>;
}

export interface MetricsInput {
  sessions: readonly SessionSummaryInput[];
  events: readonly TimelineEventLike[];
  now?: Date;
}

interface Distribution {
  count: number;
  p50Ms: number | null;
  p90Ms: number | null;
  meanMs: number | null;
}

export interface DiagnosisMetrics {
  sessions: { total: number; open: number; resolved: number };
  timeToResolution: Distribution;
  evidenceCompletenessAtResolution: { count: number; mean: number | null; min: number | null };
  knowledgeReuse: { resolved: number; usedMemoryMatch: number; rate: number | null };
  firstTimeFix: { validatedSessions: number; passedFirstTime: number; rate: number | null };
  interventions: {
    total: number;
    blocked: number;
    warned: number;
    byType: Record<PanicType, { total: number; blocked: number; bySeverity: Record<PanicSeverity, number> }>;
  };
  breakGlass: {
    granted: number;
    reviewsDue: number;
    reviewsCompletedOnTime: number;
    reviewsOverdue: number;
    postmortemCompliance: number | null;
  };
  /** Events whose data did not have the expected shape; they are left out of the figures above. */
  malformedEvents: number;
}

const PanicDataSchema = z.object({ signalType: PanicTypeSchema, severity: PanicSeveritySchema, blocked: z.boolean() });
const GrantDataSchema = z.object({ overrideId: z.string(), reviewDueAt: z.string() });
const ReviewDataSchema = z.object({ overrideId: z.string() });
const ValidationDataSchema = z.object({ passed: z.boolean() });

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1] ?? null;
}

const ratio = (a: number, b: number) => (b === 0 ? null : Math.round((a / b) * 1000) / 1000);

/** What the recorded events count: panic signals by type, break-glass grants and reviews, fix validations. */
function tallyEvents(events: MetricsInput['events']) {
  let malformed = 0;
  const byType = Object.fromEntries(
    PANIC_TYPES.map((t) => [t, { total: 0, blocked: 0, bySeverity: { low: 0, medium: 0, high: 0, critical: 0 } }]),
  ) as DiagnosisMetrics['interventions']['byType'];
  let blocked = 0;
  let total = 0;
  const grants = new Map<string, { reviewDueAt: string }>();
  const reviews = new Map<string, string>();
  const validations = new Map<string, boolean[]>();

  const ordered = [...events].sort((a, b) => byCodePoint(a.at, b.at));
  for (const event of ordered) {
    if (event.type === METRIC_EVENTS.panicSignal) {
      const data = PanicDataSchema.safeParse(event.data);
      if (!data.success) {
        malformed++;
        continue;
      }
      total++;
      const slot = byType[data.data.signalType];
      slot.total++;
      slot.bySeverity[data.data.severity]++;
      if (data.data.blocked) {
        slot.blocked++;
        blocked++;
      }
    } else if (event.type === `${METRIC_EVENTS.breakGlassPrefix}granted`) {
      const data = GrantDataSchema.safeParse(event.data);
      if (!data.success) malformed++;
      else grants.set(data.data.overrideId, { reviewDueAt: data.data.reviewDueAt });
    } else if (event.type === `${METRIC_EVENTS.breakGlassPrefix}review-completed`) {
      const data = ReviewDataSchema.safeParse(event.data);
      if (!data.success) malformed++;
      else if (!reviews.has(data.data.overrideId)) reviews.set(data.data.overrideId, event.at);
    } else if (event.type === METRIC_EVENTS.fixValidated) {
      const data = ValidationDataSchema.safeParse(event.data);
      if (!data.success) malformed++;
      else validations.set(event.sessionId, [...(validations.get(event.sessionId) ?? []), data.data.passed]);
    }
  }
  return { malformed, byType, blocked, total, grants, reviews, validations };
}

/** Break-glass reviews that fell due by now: completed on time, or overdue. */
function reviewCompliance(
  grants: ReadonlyMap<string, { reviewDueAt: string }>,
  reviews: ReadonlyMap<string, string>,
  now: Date,
): { due: number; onTime: number; overdue: number } {
  let due = 0;
  let onTime = 0;
  let overdue = 0;
  for (const [id, grant] of grants) {
    const reviewedAt = reviews.get(id);
    const dueAt = Date.parse(grant.reviewDueAt);
    if (dueAt > now.getTime()) continue;
    due++;
    if (reviewedAt !== undefined && Date.parse(reviewedAt) <= dueAt) onTime++;
    else overdue++;
  }
  return { due, onTime, overdue };
}

export function computeMetrics(input: MetricsInput): DiagnosisMetrics {
  const now = input.now ?? new Date();
  const resolved = input.sessions.filter((s) => s.status === 'resolved');

  const durations = resolved
    .map((s) => Date.parse(s.resolvedAt ?? s.closedAt ?? '') - Date.parse(s.createdAt))
    .filter((d) => Number.isFinite(d) && d >= 0)
    .sort((a, b) => a - b);
  const completeness = resolved
    .map((s) => s.evidenceCompleteness ?? s.evidence?.completeness)
    .filter((c): c is number => typeof c === 'number');

  const usedMatch = new Set(
    input.events.filter((e) => e.type === METRIC_EVENTS.memoryMatchUsed).map((e) => e.sessionId),
  );
  const reused = resolved.filter((s) => (s.memoryMatchIds?.length ?? 0) > 0 || usedMatch.has(s.id)).length;

  const { malformed, byType, blocked, total, grants, reviews, validations } = tallyEvents(input.events);

  const { due, onTime, overdue } = reviewCompliance(grants, reviews, now);

  const validatedSessions = [...validations.values()];
  const firstTime = validatedSessions.filter((v) => v[0] === true).length;

  return {
    sessions: {
      total: input.sessions.length,
      open: input.sessions.filter((s) => s.status === 'open').length,
      resolved: resolved.length,
    },
    timeToResolution: {
      count: durations.length,
      p50Ms: percentile(durations, 50),
      p90Ms: percentile(durations, 90),
      meanMs: durations.length === 0 ? null : Math.round(durations.reduce((a, b) => a + b, 0) / durations.length),
    },
    evidenceCompletenessAtResolution: {
      count: completeness.length,
      mean:
        completeness.length === 0
          ? null
          : Math.round((completeness.reduce((a, b) => a + b, 0) / completeness.length) * 1000) / 1000,
      min: completeness.length === 0 ? null : Math.min(...completeness),
    },
    knowledgeReuse: { resolved: resolved.length, usedMemoryMatch: reused, rate: ratio(reused, resolved.length) },
    firstTimeFix: {
      validatedSessions: validatedSessions.length,
      passedFirstTime: firstTime,
      rate: ratio(firstTime, validatedSessions.length),
    },
    interventions: { total, blocked, warned: total - blocked, byType },
    breakGlass: {
      granted: grants.size,
      reviewsDue: due,
      reviewsCompletedOnTime: onTime,
      reviewsOverdue: overdue,
      postmortemCompliance: ratio(onTime, due),
    },
    malformedEvents: malformed,
  };
}
