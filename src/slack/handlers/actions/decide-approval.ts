import { isStoredId, NOTE_MAX, SUMMARY_MAX } from '../../../limits.js';
import { checkApproval, noChannelPolicy, type PolicyDecision } from '../../../policy/channel-policy.js';
import type { ApprovalRecord } from '../../../store/approvals.js';
import {
  ApprovalAlreadyDecidedError,
  ApprovalExpiredError,
  ApprovalNotAllowedError,
  ApprovalNotFoundError,
} from '../../../store/errors.js';
import type { KnownBlock } from '../../../views/blocks.js';
import { decidedView } from '../../../views/decided.js';
import type { ApprovalOutcome } from '../../../workflow/api.js';
import type { SlackAppDeps } from '../../deps.js';
import { approvalFacts, auditRefusal, nowOf } from '../common.js';
import { inSessionChannel, outsideChannelRefusal } from '../session-scope.js';

const OUTCOME_WORDS = {
  approve: 'approved',
  deny: 'denied',
  'request-changes': 'changes-requested',
} as const;

export const EXPIRED_TEXT = 'This approval has expired; nothing was changed. The thread shows what happens next.';

type Loaded =
  | { ok: true; approval: ApprovalRecord; facts: ReturnType<typeof approvalFacts> }
  | { ok: false; message: string };

function isExpired(approval: ApprovalRecord, now: Date): boolean {
  return approval.status === 'expired' || approval.expiresAt <= now.toISOString();
}

export async function loadDecidable(deps: SlackAppDeps, approvalId: string, now: Date): Promise<Loaded> {
  const approval = isStoredId(approvalId) ? await deps.store.approvals.get(approvalId) : undefined;
  if (approval === undefined) return { ok: false, message: 'This approval no longer exists; nothing was changed.' };
  if (isExpired(approval, now)) return { ok: false, message: EXPIRED_TEXT };
  if (approval.status !== 'pending') {
    const by = approval.decidedBy === undefined ? '' : ` by <@${approval.decidedBy}>`;
    return { ok: false, message: `This was already decided${by} (${approval.status}); nothing was changed.` };
  }
  return { ok: true, approval, facts: approvalFacts(approval) };
}

/**
 * Whether `userId`, acting from `fromChannel`, may decide the approval: only from the session's own channel, then as
 * the channel policy says. Refusals are audited on the session's timeline.
 */
export async function authorize(
  deps: SlackAppDeps,
  approval: ApprovalRecord,
  facts: ReturnType<typeof approvalFacts>,
  input: { userId: string; action: string; fromChannel: string | undefined },
): Promise<{ decision: PolicyDecision; channelId: string | undefined }> {
  const { userId, action } = input;
  const session = await deps.store.sessions.get(approval.sessionId);
  const channelId = session?.channelId ?? facts.channelId;
  const channel = channelId === undefined ? undefined : deps.policy.forChannel(channelId);
  const decision =
    channelId === undefined || !inSessionChannel({ channelId }, input.fromChannel)
      ? outsideChannelRefusal()
      : channel === undefined
        ? noChannelPolicy(channelId)
        : await checkApproval(
            channel,
            deps.membership,
            { ...facts, requester: facts.requester ?? session?.requester },
            userId,
          );
  if (!decision.allowed) {
    await auditRefusal(deps, approval.sessionId, {
      actor: userId,
      action,
      decision,
      detail: { approvalId: approval.id, kind: approval.kind },
    });
  }
  return { decision, channelId };
}

/**
 * Decides an approval once: one conditional update in the store picks the single winner, who alone sends
 * SendTaskSuccess and updates the message. Everyone else (a second click, a second approver, a late click) gets an
 * ephemeral answer and changes nothing.
 */
async function repeatedDecision(
  deps: SlackAppDeps,
  input: { approvalId: string; userId: string; decision: ApprovalOutcome['decision'] },
  now: Date,
): Promise<ApprovalRecord | undefined> {
  if (!isStoredId(input.approvalId)) return undefined;
  const approval = await deps.store.approvals.get(input.approvalId);
  if (approval === undefined || approval.status === 'pending') return undefined;
  if (approval.token === undefined && !viaInbox(approval)) return undefined;
  if (isExpired(approval, now) || !sameDecision(approval, input)) return undefined;
  return approval;
}

/** A specialist proposal: nobody waits on a task token, the decision goes to the session as thread input. */
function viaInbox(approval: ApprovalRecord): boolean {
  return approval.data?.['delivery'] === 'inbox';
}

/** Hands a proposal's decision to its session's inbox; the same approval is consumed once, however often sent. */
async function deliverDecision(
  deps: SlackAppDeps,
  approval: ApprovalRecord,
  input: { userId: string; decision: ApprovalOutcome['decision'] },
): Promise<'delivered' | 'closed'> {
  const session = await deps.store.sessions.get(approval.sessionId);
  if (session === undefined || session.status !== 'open') return 'closed';
  await deps.workflow.deliverInput({
    sessionId: approval.sessionId,
    userId: input.userId,
    text: input.decision === 'approve' ? 'yes, consult the specialist' : 'no, thanks',
    source: 'button',
    action: { type: 'handoff', approvalId: approval.id, decision: input.decision === 'approve' ? 'approve' : 'deny' },
    messageKey: `approval:${approval.id}`,
  });
  return 'delivered';
}

function sameDecision(
  approval: ApprovalRecord,
  input: { userId: string; decision: ApprovalOutcome['decision'] },
): boolean {
  if (approval.decidedBy !== input.userId) return false;
  const status = input.decision === 'approve' ? 'approved' : 'rejected';
  const changes = (approval.reason ?? '').startsWith('request-changes');
  return approval.status === status && (input.decision === 'request-changes') === changes;
}

type DecisionInput = {
  approvalId: string;
  userId: string;
  decision: ApprovalOutcome['decision'];
  note?: string;
  /** Where the decision comes from: the clicked message's channel, or the channel a modal was opened in. */
  channelId: string | undefined;
  messageTs?: string;
  blocks?: KnownBlock[];
};

type Refusal = { ok: false; message: string };

/** The approval's decision as recorded: `redelivery` when it was already on record and is only handed over again. */
type Recorded = { ok: true; decided: ApprovalRecord; redelivery: boolean };

function alreadyDecided(approval: ApprovalRecord | undefined): Refusal {
  const by = approval?.decidedBy === undefined ? '' : ` by <@${approval.decidedBy}>`;
  return { ok: false, message: `This was already decided${by}; nothing was changed.` };
}

/**
 * Writes the decision with one conditional update, so a single click wins. A repeat of a decision already on record
 * is not written again but handed over again.
 */
async function recordDecision(
  deps: SlackAppDeps,
  approval: ApprovalRecord,
  input: DecisionInput,
  repeat: boolean,
  now: Date,
): Promise<Recorded | Refusal> {
  if (repeat) return { ok: true, decided: approval, redelivery: true };
  try {
    const decided = await deps.store.approvals.decide(
      approval.id,
      input.decision === 'approve' ? 'approved' : 'rejected',
      input.userId,
      now,
      input.decision === 'request-changes'
        ? { reason: `request-changes${input.note === undefined ? '' : `: ${input.note}`}`.slice(0, NOTE_MAX) }
        : input.note === undefined
          ? {}
          : { reason: input.note.slice(0, NOTE_MAX) },
    );
    return { ok: true, decided, redelivery: false };
  } catch (error) {
    return refusedDecision(deps, approval, input, error, now);
  }
}

/** What a failed conditional update means for the person who clicked; an unknown failure is thrown on. */
async function refusedDecision(
  deps: SlackAppDeps,
  approval: ApprovalRecord,
  input: DecisionInput,
  error: unknown,
  now: Date,
): Promise<Recorded | Refusal> {
  if (error instanceof ApprovalExpiredError) return { ok: false, message: EXPIRED_TEXT };
  if (error instanceof ApprovalAlreadyDecidedError) {
    const current = await deps.store.approvals.get(approval.id);
    if (current !== undefined && isExpired(current, now)) return { ok: false, message: EXPIRED_TEXT };
    // The same person repeating the same decision after "please click again": the first click recorded it but
    // its hand-over to the waiting run failed. Hand it over now; a task that already has it answers closed.
    if (current !== undefined && sameDecision(current, input)) return { ok: true, decided: current, redelivery: true };
    return alreadyDecided(current);
  }
  if (error instanceof ApprovalNotAllowedError) {
    const decision = {
      allowed: false as const,
      code: 'not-approver' as const,
      reason: 'You are not among the people who may decide this approval.',
    };
    await auditRefusal(deps, approval.sessionId, {
      actor: input.userId,
      action: `approval.${input.decision}`,
      decision,
    });
    return { ok: false, message: decision.reason };
  }
  if (error instanceof ApprovalNotFoundError) return { ok: false, message: 'This approval no longer exists.' };
  throw error;
}

async function appendDecidedToTimeline(deps: SlackAppDeps, approval: ApprovalRecord, input: DecisionInput) {
  await deps.store.timeline
    .append(approval.sessionId, {
      type: 'approval.decided',
      actor: input.userId,
      summary: `${approval.kind} ${input.decision}${input.note === undefined ? '' : `: ${input.note}`}`.slice(
        0,
        SUMMARY_MAX,
      ),
      data: { approvalId: approval.id, kind: approval.kind, decision: input.decision },
    })
    .catch((error: Error) => (deps.logger ?? console).error('timeline append failed', { error: error.message }));
}

/** Hands the decision to whoever waits for it: the run's task token, or the session's inbox for a proposal. */
async function handOver(
  deps: SlackAppDeps,
  approval: ApprovalRecord,
  input: DecisionInput,
  decidedAt: string,
): Promise<'delivered' | 'sent' | 'closed'> {
  const outcome: ApprovalOutcome = {
    decision: input.decision,
    userId: input.userId,
    decidedAt,
    ...(input.note === undefined ? {} : { note: input.note }),
  };
  return approval.token === undefined
    ? await deliverDecision(deps, approval, input)
    : await deps.workflow.sendTaskSuccess(approval.token, outcome);
}

/** Replaces the approval message's buttons with who decided what and when. */
async function showDecided(
  deps: SlackAppDeps,
  approval: ApprovalRecord,
  facts: ReturnType<typeof approvalFacts>,
  input: DecisionInput,
  decidedAt: string,
): Promise<void> {
  const channel = input.channelId ?? facts.channelId;
  const ts = input.messageTs ?? facts.messageTs;
  if (channel === undefined || ts === undefined) return;
  // A modal submission has no copy of the message; the approval's summary stands in for its content.
  const view = decidedView({
    outcome: OUTCOME_WORDS[input.decision],
    by: input.userId,
    at: decidedAt,
    ...(input.note === undefined ? {} : { note: input.note }),
    ...(input.blocks === undefined ? {} : { blocks: input.blocks }),
    title: approval.summary ?? `${approval.kind} for session ${approval.sessionId}`,
    sessionId: approval.sessionId,
  });
  await deps.client.chat
    .update({ channel, ts, text: view.text, blocks: view.blocks })
    .catch((error: Error) => (deps.logger ?? console).warn('message update failed', { error: error.message }));
}

export async function decideApproval(
  deps: SlackAppDeps,
  input: DecisionInput,
): Promise<{ ok: true } | { ok: false; message: string }> {
  const now = nowOf(deps);
  const loaded = await loadDecidable(deps, input.approvalId, now);
  // "Please click again" after a decision whose hand-over failed: the same person repeating the same decision.
  const repeat = loaded.ok ? undefined : await repeatedDecision(deps, input, now);
  if (!loaded.ok && repeat === undefined) return loaded;
  const approval = loaded.ok ? loaded.approval : (repeat as ApprovalRecord);
  const facts = loaded.ok ? loaded.facts : approvalFacts(approval);
  const { decision: policy } = await authorize(deps, approval, facts, {
    userId: input.userId,
    action: `approval.${input.decision}`,
    fromChannel: input.channelId,
  });
  if (!policy.allowed) return { ok: false, message: policy.reason };
  if (approval.token === undefined && !viaInbox(approval)) {
    return { ok: false, message: 'This request is still being set up; try again in a few seconds.' };
  }

  const recorded = await recordDecision(deps, approval, input, repeat !== undefined, now);
  if (!recorded.ok) return recorded;
  const { decided, redelivery } = recorded;
  const decidedAt = decided.decidedAt ?? now.toISOString();
  if (!redelivery) await appendDecidedToTimeline(deps, approval, input);
  const answer = await handOver(deps, approval, input, decidedAt);
  if (answer === 'closed') {
    // A repeat whose first hand-over did land: nothing more to do than say so.
    if (redelivery) return alreadyDecided(decided);
    // The run that asked is gone (a restart or a failure). The decision is on record; the session is picked up
    // again by the reconciler, and the request can be made again there.
    return {
      ok: false,
      message:
        'Your decision is recorded, but the workflow run that asked for it has ended, so it could not act on it. The session will pick up again in this thread; ask for this again there.',
    };
  }
  await showDecided(deps, approval, facts, input, decidedAt);
  return { ok: true };
}
