import { byCodePoint } from '../code-point-order.js';
import type { SessionRecord } from '../store/sessions.js';
import { homeView } from '../views/home.js';
import { collectMetrics } from './collect-metrics.js';
import type { SlackAppDeps } from './deps.js';

/**
 * Builds and publishes a person's App Home. Their open sessions come from the requester index, in whatever channel
 * they were started, and from the channels the policy lists; approvals from the approver index; the metrics' open
 * sessions from the listed channels.
 */
export async function publishHome(deps: SlackAppDeps, userId: string): Promise<void> {
  const now = deps.now?.() ?? new Date();
  const channels = deps.policy.listedChannels();
  const [mine, openLists, approvals] = await Promise.all([
    deps.store.sessions.listOpenByRequester(userId, { limit: 20 }),
    Promise.all(channels.map((c) => deps.store.sessions.listOpenByChannel(c, { limit: 50 }))),
    deps.store.approvals.listPendingFor(userId, now, { limit: 20 }),
  ]);
  const open: SessionRecord[] = openLists.flat();
  const { metrics, resolved, scope } = await collectMetrics(deps);
  // Sessions opened before the requester index existed have no entry in it; the listed channels still show them.
  const byId = new Map([...open.filter((s) => s.requester === userId), ...mine].map((s) => [s.id, s]));
  const view = homeView({
    userId,
    openSessions: [...byId.values()].sort((a, b) => byCodePoint(b.createdAt, a.createdAt)),
    approvals,
    resolved,
    metrics,
    metricsScope: scope,
  });
  await deps.client.views.publish({ user_id: userId, view });
}
