import { computeMetrics, type DiagnosisMetrics } from '../memory/metrics.js';
import type { SessionRecord } from '../store/sessions.js';
import type { TimelineEvent } from '../store/timeline.js';
import type { SlackAppDeps } from './deps.js';

/** How many recent resolved incidents the metrics cover; each costs one timeline query. */
export const METRICS_WINDOW = 30;

/**
 * ADR-005 metrics over the most recent resolved incidents plus the given open sessions. A bounded window keeps the
 * work inside Slack's 3 s even for a busy team; the figures say which window they cover.
 */
export async function collectMetrics(
  deps: SlackAppDeps,
  open: readonly SessionRecord[],
): Promise<{ metrics: DiagnosisMetrics; resolved: SessionRecord[]; scope: string }> {
  const resolved = await deps.store.sessions.listRecent('resolved', { limit: METRICS_WINDOW });
  const sessions = [...resolved, ...open];
  const timelines = await Promise.all(
    sessions.map((s) => deps.store.timeline.list(s.id, { limit: 500 }).catch((): TimelineEvent[] => [])),
  );
  const metrics = computeMetrics({
    sessions: sessions.map((s) => ({
      id: s.id,
      status: s.status,
      createdAt: s.createdAt,
      ...(s.closedAt === undefined ? {} : { closedAt: s.closedAt }),
      memoryMatchIds: s.memoryMatchIds,
      evidence: { completeness: s.evidence.completeness },
    })),
    events: timelines.flat(),
    now: deps.now?.() ?? new Date(),
  });
  const scope = `Last ${resolved.length} resolved incident${resolved.length === 1 ? '' : 's'} and ${open.length} open session${open.length === 1 ? '' : 's'}.`;
  return { metrics, resolved, scope };
}
