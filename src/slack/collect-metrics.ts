import { collectMetricsFromStore } from '../memory/collect.js';
import type { DiagnosisMetrics } from '../memory/metrics.js';
import type { SessionRecord } from '../store/sessions.js';
import type { SlackAppDeps } from './deps.js';

/** How many recently resolved incidents the App Home lists. */
const RECENT_RESOLVED = 30;

/**
 * The ADR-005 metrics for `/triage stats` and the App Home: the same computation over the same window as
 * `calmops stats` (collectMetricsFromStore with its defaults: the most recently resolved incidents), so every surface
 * shows the same figures at the same moment. Open sessions are not in the window: they have no outcome yet.
 */
export async function collectMetrics(
  deps: SlackAppDeps,
): Promise<{ metrics: DiagnosisMetrics; resolved: SessionRecord[]; scope: string }> {
  const now = deps.now?.() ?? new Date();
  const [collected, resolved] = await Promise.all([
    collectMetricsFromStore({ sessions: deps.store.sessions, timeline: deps.store.timeline }, { now }),
    deps.store.sessions.listRecent('resolved', { limit: RECENT_RESOLVED }),
  ]);
  const n = collected.window.resolvedSessions;
  const scope = `The last ${n} resolved incident${n === 1 ? '' : 's'} (as \`calmops stats\` counts them).`;
  return { metrics: collected.metrics, resolved, scope };
}
