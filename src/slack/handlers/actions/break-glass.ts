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
  await openRecordedModal(deps, {
    triggerId: click.triggerId,
    view: breakGlassModal({
      sessionId: session.id,
      channelId: session.channelId,
      ...(session.threadTs === undefined ? {} : { threadTs: session.threadTs }),
      currentState: session.state,
    }),
    purpose: {
      kind: 'break-glass',
      userId: click.userId,
      sessionId: session.id,
      channelId: session.channelId,
      ...(session.threadTs === undefined ? {} : { threadTs: session.threadTs }),
    },
  });
}
