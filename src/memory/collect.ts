import * as z from 'zod';
import { byCodePoint } from '../code-point-order.js';
import { StoreValidationError } from '../store/errors.js';
import type { SessionRecord } from '../store/sessions.js';
import type { TimelineEvent } from '../store/timeline.js';
import { computeMetrics, type DiagnosisMetrics, type SessionSummaryInput } from './metrics.js';

/**
 * Loads what the ADR-005 metrics need from the store with a bounded number of requests: one paged index query for
 * the most recently resolved sessions, then one bounded timeline query per session, a few at a time. Shared by the
 * `calmops stats` command; any other reader of the same figures can use it too.
 */

/** The two repositories the loader reads; the store's SessionRepository and TimelineRepository fit. */
export interface MetricsSource {
  sessions: {
    listRecent(status: 'resolved', options: { limit?: number; since?: Date }): Promise<SessionRecord[]>;
  };
  timeline: { list(sessionId: string, options: { limit?: number }): Promise<TimelineEvent[]> };
}

export const METRICS_LIMITS = {
  defaultSessions: 100,
  maxSessions: 1000,
  defaultEventsPerSession: 500,
  maxEventsPerSession: 1000,
  concurrency: 8,
} as const;

const CollectMetricsOptionsSchema = z.strictObject({
  /** Only sessions resolved at or after this time. */
  since: z.date().optional(),
  /** How many of the most recently resolved sessions to cover. */
  limit: z.number().int().min(1).max(METRICS_LIMITS.maxSessions).default(METRICS_LIMITS.defaultSessions),
  /** Timeline events read per session; a longer timeline is counted in `truncatedTimelines`. */
  eventsPerSession: z
    .number()
    .int()
    .min(1)
    .max(METRICS_LIMITS.maxEventsPerSession)
    .default(METRICS_LIMITS.defaultEventsPerSession),
  /** Timeline queries in flight at once. */
  concurrency: z.number().int().min(1).max(32).default(METRICS_LIMITS.concurrency),
  now: z.date().optional(),
});
export type CollectMetricsOptions = z.input<typeof CollectMetricsOptionsSchema>;

interface SkippedTimeline {
  sessionId: string;
  reason: string;
}

export interface CollectedMetrics {
  metrics: DiagnosisMetrics;
  window: {
    since: string | null;
    limit: number;
    resolvedSessions: number;
    oldestResolvedAt: string | null;
    newestResolvedAt: string | null;
  };
  /** Timeline queries sent, one per session, each bounded by `eventsPerSession`. */
  timelineQueries: number;
  eventsRead: number;
  /** Sessions whose timeline reached `eventsPerSession`: later events were not read. */
  truncatedTimelines: number;
  /** Timelines that could not be read (a malformed record, a failed request); their sessions still count. */
  skippedTimelines: SkippedTimeline[];
}

/** The summary computeMetrics takes, from a stored session. */
function sessionSummary(session: SessionRecord): SessionSummaryInput {
  return {
    id: session.id,
    status: session.status,
    createdAt: session.createdAt,
    ...(session.closedAt === undefined ? {} : { closedAt: session.closedAt }),
    memoryMatchIds: session.memoryMatchIds,
    evidence: { completeness: session.evidence.completeness },
  };
}

export async function collectMetricsFromStore(
  source: MetricsSource,
  options: CollectMetricsOptions = {},
): Promise<CollectedMetrics> {
  const parsed = CollectMetricsOptionsSchema.safeParse(options);
  if (!parsed.success) throw new StoreValidationError('metrics options', parsed.error.issues, { cause: parsed.error });
  const { since, limit, eventsPerSession, concurrency, now } = parsed.data;

  const sessions = await source.sessions.listRecent('resolved', { limit, ...(since === undefined ? {} : { since }) });
  const timelines: TimelineEvent[][] = new Array(sessions.length);
  const skipped: SkippedTimeline[] = [];
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < sessions.length; i = next++) {
      const session = sessions[i] as SessionRecord;
      try {
        timelines[i] = await source.timeline.list(session.id, { limit: eventsPerSession });
      } catch (error) {
        timelines[i] = [];
        skipped.push({ sessionId: session.id, reason: error instanceof Error ? error.message : String(error) });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, sessions.length) }, worker));

  const events = timelines.flat();
  const closed = sessions
    .map((s) => s.closedAt)
    .filter((at): at is string => at !== undefined)
    .sort();
  return {
    metrics: computeMetrics({ sessions: sessions.map(sessionSummary), events, now: now ?? new Date() }),
    window: {
      since: since?.toISOString() ?? null,
      limit,
      resolvedSessions: sessions.length,
      oldestResolvedAt: closed[0] ?? null,
      newestResolvedAt: closed.at(-1) ?? null,
    },
    timelineQueries: sessions.length,
    eventsRead: events.length,
    truncatedTimelines: timelines.filter((t) => t.length >= eventsPerSession).length,
    skippedTimelines: skipped.sort((a, b) => byCodePoint(a.sessionId, b.sessionId)),
  };
}
