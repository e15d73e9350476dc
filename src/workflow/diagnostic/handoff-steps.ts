import * as z from 'zod';
import { ID_MAX, MAX_HANDOFFS, NoteText, SessionId } from '../../limits.js';
import { ApprovalAlreadyExistsError } from '../../store/errors.js';
import type { InboxMessage } from '../../store/inbox.js';
import type { WorkflowRecord } from '../../store/workflow-records.js';
import { DomainSchema } from '../../triage/envelope/index.js';
import { handoffOutcomeView, handoffProposalView } from '../../views/handoff.js';
import { decidersOf, expireApproval, NoEligibleApproverError, postToSession } from '../common.js';
import type { WorkflowDeps } from '../deps.js';
import { recordEvent } from '../events.js';

/**
 * Ask-first without blocking. A specialist proposal is an approval with buttons but no waiting task: the execution
 * goes back to answering the thread, and the decision comes back as thread input (the button's action), which the
 * route step turns into the specialist's run or a polite "not consulted". Only a change waits for it.
 */

export const ProposeHandoffPayload = z.object({
  step: z.literal('propose-handoff'),
  sessionId: SessionId,
  domain: DomainSchema,
  reason: NoteText,
  /** The Slack user who asked; empty when calmops proposed it from the findings. */
  askedBy: z.string().max(ID_MAX).default(''),
  approvalTimeoutSeconds: z.number().int().min(1).optional(),
});

/** The approval a proposal is decided through; the inbox, not a task token, carries the decision back. */
const HANDOFF_DELIVERY = 'inbox';

export async function proposeHandoff(deps: WorkflowDeps, p: z.infer<typeof ProposeHandoffPayload>) {
  const session = await deps.store.sessions.getRequired(p.sessionId);
  const deciders = await decidersOf(deps, session, { kind: 'handoff', requester: session.requester });
  if (deciders.length === 0)
    throw new NoEligibleApproverError('Nobody may decide this handoff under the channel policy');
  const now = deps.now();
  const expiresAt = new Date(now.getTime() + (p.approvalTimeoutSeconds ?? deps.timeouts.approvalTimeoutSeconds) * 1000);
  // A retried step finds the proposal it already opened for this domain and posts nothing twice.
  const workflow = await deps.artifacts.mutateWorkflow(p.sessionId, now, (w) =>
    w.pendingHandoff?.domain === p.domain
      ? w
      : {
          ...w,
          pendingHandoff: {
            approvalId: `ho-${p.sessionId}-${now.getTime().toString(36)}`.slice(0, 64),
            domain: p.domain,
            expiresAt: expiresAt.toISOString(),
          },
          handoffDomainsProposed: w.handoffDomainsProposed.includes(p.domain)
            ? w.handoffDomainsProposed
            : [...w.handoffDomainsProposed, p.domain],
        },
  );
  const approvalId = workflow.pendingHandoff?.approvalId ?? '';
  try {
    await deps.store.approvals.create(
      {
        id: approvalId,
        kind: 'handoff',
        sessionId: session.id,
        allowedDeciders: deciders,
        requester: session.requester,
        expiresAt,
        summary: `Consult the ${p.domain} specialist`,
        data: {
          requester: session.requester,
          domain: p.domain,
          delivery: HANDOFF_DELIVERY,
          channelId: session.channelId,
          threadTs: session.threadTs,
        },
      },
      now,
    );
  } catch (error) {
    if (!(error instanceof ApprovalAlreadyExistsError)) throw error;
  }
  if ((await deps.artifacts.getPending(session.id, 'handoff', approvalId))?.messageTs) return { approvalId };
  const messageTs = await postToSession(
    deps,
    session,
    handoffProposalView({
      sessionId: session.id,
      approvalId,
      domain: p.domain,
      reason: p.reason,
      ...(p.askedBy ? { askedBy: p.askedBy } : {}),
      remaining: Math.max(0, MAX_HANDOFFS - session.handoffCount - 1),
      expiresAt: expiresAt.toISOString(),
    }),
  );
  await deps.artifacts.putPending({
    sessionId: session.id,
    kind: 'handoff',
    approvalId,
    channelId: session.channelId,
    messageTs,
    createdAt: now.toISOString(),
  });
  await recordEvent(deps, session.id, 'approval.requested', {
    summary: `Handoff to ${p.domain} proposed`,
    data: { kind: 'handoff', approvalId, domain: p.domain },
  });
  return { approvalId };
}

/**
 * A proposal nobody answered in time lapses at the next thread input: its approval is marked expired, its buttons
 * go, the thread is told, and the changes that waited for it are answered in order.
 */
export async function lapseExpiredProposal(deps: WorkflowDeps, sessionId: string): Promise<void> {
  const now = deps.now();
  const workflow = await deps.artifacts.getWorkflow(sessionId);
  const open = workflow?.pendingHandoff;
  if (!open || open.expiresAt > now.toISOString()) return;
  let held: WorkflowRecord['heldChanges'] = [];
  let lapsed = false;
  await deps.artifacts.mutateWorkflow(sessionId, now, (w) => {
    lapsed = w.pendingHandoff?.approvalId === open.approvalId;
    held = lapsed ? w.heldChanges : [];
    return lapsed ? { ...w, pendingHandoff: null, heldChanges: [] } : w;
  });
  if (!lapsed) return;
  const session = await deps.store.sessions.getRequired(sessionId);
  await expireApproval(deps, session, 'handoff', open.approvalId);
  await postToSession(deps, session, handoffOutcomeView(sessionId, open.domain, 'expired'));
  await requeue(deps, sessionId, held);
}

/** Changes that waited for a proposal's answer go back into the inbox, in the order they were asked. */
export async function requeue(
  deps: WorkflowDeps,
  sessionId: string,
  held: WorkflowRecord['heldChanges'],
): Promise<void> {
  for (const change of held) {
    await deps.store.inbox.append(
      sessionId,
      { kind: change.kind as InboxMessage['kind'], userId: change.userId, text: change.text, data: {} },
      deps.now(),
    );
  }
}
