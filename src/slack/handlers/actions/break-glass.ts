import type { SessionRecord } from '../../../store/sessions.js';
import { breakGlassModal } from '../../../views/modals.js';
import type { SlackAppDeps } from '../../deps.js';
import { openRecordedModal } from '../session-scope.js';
import { type ClickContext, sessionOfClick, tell } from './click.js';

/** "Break glass" opens the override request modal for an open session. */
export async function openBreakGlass(deps: SlackAppDeps, click: ClickContext): Promise<void> {
  const session = await sessionOfClick(deps, click, click.value, 'break-glass.open');
  if (session === undefined) return;
  if (session.status !== 'open') {
    await tell(deps, click, 'This session is not open, so there is nothing to override.');
    return;
  }
  await openBreakGlassModal(deps, click.triggerId, click.userId, session);
}

/** Opens the override request modal for an open session, recorded for the person who asked. */
export async function openBreakGlassModal(
  deps: SlackAppDeps,
  triggerId: string,
  userId: string,
  session: SessionRecord,
): Promise<void> {
  const thread = session.threadTs === undefined ? {} : { threadTs: session.threadTs };
  await openRecordedModal(deps, {
    triggerId,
    view: breakGlassModal({
      sessionId: session.id,
      channelId: session.channelId,
      ...thread,
      currentState: session.state,
    }),
    purpose: { kind: 'break-glass', userId, sessionId: session.id, channelId: session.channelId, ...thread },
  });
}
