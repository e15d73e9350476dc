import { mention } from '../mrkdwn/escape.js';
import type { ApprovalRecord } from '../store/approvals.js';
import type { Store } from '../store/index.js';
import { replyView } from '../views/intervention.js';
import type { ThreadMessage } from '../views/limits.js';
import type { DeliveryOutcome } from './wait-delivery.js';

/**
 * A reply that arrives while the session's execution waits for a person's decision (a plan under review runs in a
 * child execution) stays in the inbox until that decision comes, which can
 * take an hour. Without a word the thread looks dead, so the reply is acknowledged at once with what is pending and
 * who can decide it. This is the only place that does so: the Slack side calls it after every delivery.
 */

/** Approvals the diagnostic execution itself waits on, so input waits with it. */
const BLOCKING: Readonly<Record<string, string>> = {
  'plan-review': 'the remediation plan is waiting for review',
};

export interface PendingAckDeps {
  store: Pick<Store, 'approvals' | 'sessions'>;
  now: () => Date;
}

export type ThreadPost = (channelId: string, threadTs: string, message: ThreadMessage) => Promise<unknown>;

function deciders(approval: ApprovalRecord): string {
  const who = approval.allowedDeciders.slice(0, 3).map(mention);
  const more = approval.allowedDeciders.length > 3 ? ` or ${approval.allowedDeciders.length - 3} more` : '';
  return `${who.join(', ')}${more}`;
}

/** The acknowledgement for a reply held behind `approval`. */
export function pendingAckText(approval: ApprovalRecord): string {
  const what = BLOCKING[approval.kind] ?? `a ${approval.kind} decision is pending`;
  return `:hourglass_flowing_sand: Got your message; ${what} (${deciders(approval)} can decide, until ${approval.expiresAt.slice(11, 16)} UTC). It is kept, and answered as soon as that is decided.`;
}

/**
 * Acknowledges a reply that could not reach the execution because it waits on a decision. Returns the text posted,
 * or undefined when nothing was pending (the execution was only busy for a moment, and will answer itself).
 */
export async function acknowledgeWhilePending(
  deps: PendingAckDeps,
  post: ThreadPost,
  input: { sessionId: string },
  outcome: DeliveryOutcome | 'resumed',
): Promise<string | undefined> {
  if (outcome !== 'busy') return undefined;
  const now = deps.now().toISOString();
  const pending = (await deps.store.approvals.listPendingForSession(input.sessionId)).filter(
    (a) => BLOCKING[a.kind] !== undefined && a.expiresAt > now,
  );
  const approval = pending.at(-1);
  if (!approval) return undefined;
  const session = await deps.store.sessions.getRequired(input.sessionId);
  if (session.threadTs === undefined) return undefined;
  const text = pendingAckText(approval);
  await post(session.channelId, session.threadTs, replyView(session.id, text));
  return text;
}
