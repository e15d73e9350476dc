import type { SlackAppDeps } from '../../deps.js';
import type { ClickContext } from './click.js';
import { tell } from './click.js';
import { decideApproval } from './decide-approval.js';

async function decideFromClick(deps: SlackAppDeps, click: ClickContext, decision: 'approve' | 'deny'): Promise<void> {
  const result = await decideApproval(deps, {
    approvalId: click.value,
    userId: click.userId,
    decision,
    channelId: click.channelId,
    ...(click.messageTs === undefined ? {} : { messageTs: click.messageTs }),
    ...(click.blocks === undefined ? {} : { blocks: click.blocks }),
  });
  if (!result.ok) await tell(deps, click, result.message);
}

/** Approve on an approval message: the button's value is the approval id. */
export async function approveClicked(deps: SlackAppDeps, click: ClickContext): Promise<void> {
  await decideFromClick(deps, click, 'approve');
}

/** Deny on an approval message: the button's value is the approval id. */
export async function denyClicked(deps: SlackAppDeps, click: ClickContext): Promise<void> {
  await decideFromClick(deps, click, 'deny');
}
