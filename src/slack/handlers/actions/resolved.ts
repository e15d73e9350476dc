import { checkHandoff, noChannelPolicy } from '../../../policy/channel-policy.js';
import type { SlackAppDeps } from '../../deps.js';
import { auditRefusal } from '../common.js';
import { type ClickContext, clickMessageKey, sessionOfClick, tell } from './click.js';

/** "Resolved": whoever the channel lets hand a session off says the incident is over. */
export async function resolveSession(deps: SlackAppDeps, click: ClickContext): Promise<void> {
  const session = await sessionOfClick(deps, click, click.value, 'session.resolve');
  if (session === undefined) return;
  const channel = deps.policy.forChannel(session.channelId);
  const decision =
    channel === undefined
      ? noChannelPolicy(session.channelId)
      : await checkHandoff(channel, deps.membership, { userId: click.userId, requester: session.requester });
  if (!decision.allowed) {
    await auditRefusal(deps, session.id, { actor: click.userId, action: 'session.resolve', decision });
    await tell(deps, click, decision.reason);
    return;
  }
  await deps.workflow.deliverInput({
    sessionId: session.id,
    userId: click.userId,
    text: 'resolved',
    source: 'button',
    action: { type: 'resolved' },
    messageKey: clickMessageKey(click),
  });
}
