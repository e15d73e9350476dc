import type { SessionRecord } from '../store/sessions.js';
import type { SlackAppDeps } from './deps.js';
import { collectMetrics } from './metrics.js';
import { homeView } from './views/home.js';

/**
 * Builds and publishes a person's App Home. Open sessions are looked up in the channels the policy lists (the store
 * indexes open sessions per channel); approvals come from the approver index.
 */
export async function publishHome(deps: SlackAppDeps, userId: string): Promise<void> {
  const now = deps.now?.() ?? new Date();
  const channels = deps.policy.listedChannels();
  const [openLists, approvals] = await Promise.all([
    Promise.all(channels.map((c) => deps.store.sessions.listOpenByChannel(c, { limit: 50 }))),
    deps.store.approvals.listPendingFor(userId, now, { limit: 20 }),
  ]);
  const open: SessionRecord[] = openLists.flat();
  const { metrics, resolved, scope } = await collectMetrics(deps, open);
  const view = homeView({
    userId,
    openSessions: open.filter((s) => s.requester === userId),
    approvals,
    resolved,
    metrics,
    metricsScope: scope,
  });
  await deps.client.views.publish({ user_id: userId, view });
}
