import { createHash } from 'node:crypto';
import { type ApprovalFacts, decidersFor } from '../policy/channel-policy.js';
import type { SessionRecord } from '../store/sessions.js';
import { decidedView } from '../views/decided.js';
import type { ThreadMessage } from '../views/limits.js';
import type { WorkflowDeps } from './deps.js';
import { recordEvent } from './events.js';

/** A step that cannot do its work with what it was given (the thread is told through the failure path). */
export class StepInputError extends Error {
  override readonly name = 'StepInputError';
}

export class NoEligibleApproverError extends Error {
  override readonly name = 'NoEligibleApproverError';
}

export async function postToSession(
  deps: WorkflowDeps,
  session: SessionRecord,
  message: ThreadMessage,
): Promise<string> {
  const { ts } = await deps.slack.post(session.channelId, session.threadTs, message);
  return ts;
}

/** Approval ids derive from the task token, so a retried notifier finds the approval it already created. */
export function approvalIdFor(token: string): string {
  return `ap-${createHash('sha256').update(token).digest('hex').slice(0, 24)}`;
}

/**
 * Who may decide: what the channel policy allows (kept in the approval so the store's conditional decision agrees),
 * or the requester alone where no policy is configured for the channel.
 */
export async function decidersOf(deps: WorkflowDeps, session: SessionRecord, facts: ApprovalFacts): Promise<string[]> {
  const channel = deps.policy?.forChannel(session.channelId);
  if (channel && deps.membership) {
    return decidersFor(channel, deps.membership, facts);
  }
  if (facts.kind === 'break-glass') return facts.approverUserId ? [facts.approverUserId] : [];
  return [session.requester];
}

/** Expires the approval a timed-out wait was about: marks it, removes its buttons, counts it, tells the thread. */
export async function expireApproval(
  deps: WorkflowDeps,
  session: SessionRecord,
  kind: string,
  approvalId?: string,
): Promise<void> {
  const pending = await deps.artifacts.getPending(session.id, kind, approvalId);
  const id = approvalId ?? pending?.approvalId;
  const now = deps.now();
  if (id !== undefined) {
    const approval = await deps.store.approvals.get(id).catch(() => undefined);
    if (approval?.status === 'pending') {
      // The wait's timeout and the approval's expiry come from the same setting but start a moment apart.
      const at = new Date(Math.max(now.getTime(), Date.parse(approval.expiresAt)));
      await deps.store.approvals.expire(id, at).catch(() => false);
    }
  }
  if (pending?.messageTs) {
    await deps.slack
      .update(
        pending.channelId,
        pending.messageTs,
        decidedView({ outcome: 'expired', at: now.toISOString(), sessionId: session.id, title: `${kind} request` }),
      )
      .catch((error: unknown) =>
        deps.logger.warn('could not update the expired approval message', { error: String(error) }),
      );
  }
  deps.metrics.approvalExpired(kind);
  await recordEvent(deps, session.id, 'approval.expired', {
    summary: `${kind} approval expired`,
    data: { kind, approvalId: id ?? null },
  });
}
