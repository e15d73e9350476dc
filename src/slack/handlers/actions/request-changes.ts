import { requestChangesModal } from '../../../views/modals.js';
import type { SlackAppDeps } from '../../deps.js';
import { nowOf } from '../common.js';
import { OUTSIDE_CHANNEL_TEXT, openRecordedModal } from '../session-scope.js';
import { type ClickContext, tell } from './click.js';
import { authorize, loadDecidable } from './decide-approval.js';

/** "Request changes" opens a modal for the note; the decision is made when it is submitted. */
export async function openRequestChanges(deps: SlackAppDeps, click: ClickContext): Promise<void> {
  const now = nowOf(deps);
  const loaded = await loadDecidable(deps, click.value, now);
  if (!loaded.ok) {
    await tell(deps, click, loaded.message);
    return;
  }
  const { decision: policy, channelId } = await authorize(deps, loaded.approval, loaded.facts, {
    userId: click.userId,
    action: 'approval.request-changes',
    fromChannel: click.channelId,
  });
  if (!policy.allowed || channelId === undefined) {
    await tell(deps, click, policy.allowed ? OUTSIDE_CHANNEL_TEXT : policy.reason);
    return;
  }
  await openRecordedModal(deps, {
    triggerId: click.triggerId,
    view: requestChangesModal({
      approvalId: loaded.approval.id,
      channelId,
      ...(click.messageTs === undefined ? {} : { messageTs: click.messageTs }),
    }),
    purpose: {
      kind: 'request-changes',
      userId: click.userId,
      sessionId: loaded.approval.sessionId,
      channelId,
      approvalId: loaded.approval.id,
      ...(click.messageTs === undefined ? {} : { messageTs: click.messageTs }),
    },
  });
}
