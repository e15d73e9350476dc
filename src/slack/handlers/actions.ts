import type { App, BlockAction, ButtonAction } from '@slack/bolt';
import * as z from 'zod';
import { ID_MAX, isStoredId, KUBE_LABEL_PATTERN, NOTE_MAX, RecordId, SUMMARY_MAX } from '../../limits.js';
import { escapeText } from '../../mrkdwn/escape.js';
import {
  checkApproval,
  checkHandoff,
  checkIntent,
  noChannelPolicy,
  type PolicyDecision,
} from '../../policy/channel-policy.js';
import type { ApprovalRecord } from '../../store/approvals.js';
import {
  ApprovalAlreadyDecidedError,
  ApprovalExpiredError,
  ApprovalNotAllowedError,
  ApprovalNotFoundError,
} from '../../store/errors.js';
import type { KnownBlock } from '../../views/blocks.js';
import { decidedView } from '../../views/decided.js';
import { code } from '../../views/limits.js';
import { breakGlassModal, requestChangesModal } from '../../views/modals.js';
import { NAMESPACE_ACTION_PREFIX } from '../../views/namespace-choice.js';
import type { ApprovalOutcome } from '../../workflow/api.js';
import type { SlackAppDeps } from '../deps.js';
import { approvalFacts, auditRefusal, ephemeral, nowOf } from './common.js';
import { inSessionChannel, OUTSIDE_CHANNEL_TEXT, openRecordedModal, outsideChannelRefusal } from './session-scope.js';

const ACTIONS = {
  approve: 'approval_approve',
  deny: 'approval_deny',
  requestChanges: 'approval_request_changes',
  /** Matched by prefix: every hypothesis button of one message needs its own action_id. */
  hypothesis: /^hypothesis_choose(:\d+)?$/,
  resolved: 'session_resolved',
  breakGlassOpen: 'breakglass_open',
  /** Matched by prefix, like the hypotheses: one button per namespace a request's words matched. */
  namespace: new RegExp(`^${NAMESPACE_ACTION_PREFIX}(:\\d+)?$`),
} as const;

const OUTCOME_WORDS = {
  approve: 'approved',
  deny: 'denied',
  'request-changes': 'changes-requested',
} as const;

export const EXPIRED_TEXT = 'This approval has expired; nothing was changed. The thread shows what happens next.';

/** The answer to a button calmops does not know: one from an older version's message, or another app's. */
export const UNKNOWN_ACTION_TEXT =
  'This button belongs to a message calmops no longer tracks; nothing was changed. The session thread has the current buttons.';

/** Every action id calmops puts on a button; anything else is answered with UNKNOWN_ACTION_TEXT. */
function isKnownAction(actionId: string): boolean {
  return Object.values(ACTIONS).some((known) =>
    typeof known === 'string' ? known === actionId : known.test(actionId),
  );
}

const HypothesisValueSchema = z.object({ s: z.string().min(1).max(ID_MAX), h: RecordId });
const NamespaceValueSchema = z.object({
  s: z.string().min(1).max(ID_MAX),
  n: z.string().regex(KUBE_LABEL_PATTERN),
});

interface ClickContext {
  userId: string;
  channelId: string | undefined;
  messageTs: string | undefined;
  threadTs: string | undefined;
  blocks: KnownBlock[] | undefined;
  value: string;
  actionTs: string;
  triggerId: string;
}

function clickOf(body: BlockAction, action: ButtonAction): ClickContext {
  const message = body.message as { ts?: string; thread_ts?: string; blocks?: KnownBlock[] } | undefined;
  return {
    userId: body.user.id,
    channelId: body.channel?.id ?? body.container?.channel_id,
    messageTs: message?.ts ?? body.container?.message_ts,
    threadTs: message?.thread_ts ?? message?.ts,
    blocks: message?.blocks,
    value: action.value ?? '',
    actionTs: action.action_ts,
    triggerId: body.trigger_id,
  };
}

async function tell(deps: SlackAppDeps, click: ClickContext, text: string): Promise<void> {
  if (click.channelId === undefined) return;
  await ephemeral(deps, {
    channel: click.channelId,
    user: click.userId,
    text,
    ...(click.threadTs === undefined ? {} : { threadTs: click.threadTs }),
  });
}

/** A duplicate delivery of the same click (same action_ts, same person) is dropped before any work. */
async function firstClick(deps: SlackAppDeps, click: ClickContext): Promise<boolean> {
  return deps.store.dedupe.firstDelivery(`action:${click.actionTs}:${click.userId}`);
}

type Loaded =
  | { ok: true; approval: ApprovalRecord; facts: ReturnType<typeof approvalFacts> }
  | { ok: false; message: string };

function isExpired(approval: ApprovalRecord, now: Date): boolean {
  return approval.status === 'expired' || approval.expiresAt <= now.toISOString();
}

async function loadDecidable(deps: SlackAppDeps, approvalId: string, now: Date): Promise<Loaded> {
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
async function authorize(
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

export async function decideApproval(
  deps: SlackAppDeps,
  input: {
    approvalId: string;
    userId: string;
    decision: ApprovalOutcome['decision'];
    note?: string;
    /** Where the decision comes from: the clicked message's channel, or the channel a modal was opened in. */
    channelId: string | undefined;
    messageTs?: string;
    blocks?: KnownBlock[];
  },
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

  let decided: ApprovalRecord = approval;
  let redelivery = repeat !== undefined;
  try {
    if (!redelivery)
      decided = await deps.store.approvals.decide(
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
  } catch (error) {
    if (error instanceof ApprovalExpiredError) return { ok: false, message: EXPIRED_TEXT };
    if (error instanceof ApprovalAlreadyDecidedError) {
      const current = await deps.store.approvals.get(approval.id);
      if (current !== undefined && isExpired(current, now)) return { ok: false, message: EXPIRED_TEXT };
      // The same person repeating the same decision after "please click again": the first click recorded it but
      // its hand-over to the waiting run failed. Hand it over now; a task that already has it answers closed.
      if (current !== undefined && sameDecision(current, input)) {
        decided = current;
        redelivery = true;
      } else {
        const by = current?.decidedBy === undefined ? '' : ` by <@${current.decidedBy}>`;
        return { ok: false, message: `This was already decided${by}; nothing was changed.` };
      }
    } else {
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
  }

  const decidedAt = decided.decidedAt ?? now.toISOString();
  const outcome: ApprovalOutcome = {
    decision: input.decision,
    userId: input.userId,
    decidedAt,
    ...(input.note === undefined ? {} : { note: input.note }),
  };
  if (!redelivery) {
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
  const answer =
    approval.token === undefined
      ? await deliverDecision(deps, approval, input)
      : await deps.workflow.sendTaskSuccess(approval.token, outcome);
  if (answer === 'closed') {
    // A repeat whose first hand-over did land: nothing more to do than say so.
    if (redelivery) {
      const by = decided.decidedBy === undefined ? '' : ` by <@${decided.decidedBy}>`;
      return { ok: false, message: `This was already decided${by}; nothing was changed.` };
    }
    // The run that asked is gone (a restart or a failure). The decision is on record; the session is picked up
    // again by the reconciler, and the request can be made again there.
    return {
      ok: false,
      message:
        'Your decision is recorded, but the workflow run that asked for it has ended, so it could not act on it. The session will pick up again in this thread; ask for this again there.',
    };
  }

  const channel = input.channelId ?? facts.channelId;
  const ts = input.messageTs ?? facts.messageTs;
  if (channel !== undefined && ts !== undefined) {
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
  return { ok: true };
}

export function registerActions(app: App, deps: SlackAppDeps): void {
  const logger = deps.logger ?? console;

  const onClick = (
    actionId: string | RegExp,
    run: (click: ClickContext) => Promise<void>,
    options: { dedupe?: boolean } = { dedupe: true },
  ) => {
    app.action<BlockAction<ButtonAction>>(actionId, async ({ ack, body, action }) => {
      await ack();
      const click = clickOf(body, action);
      try {
        if (options.dedupe !== false && !(await firstClick(deps, click))) return;
        await run(click);
      } catch (error) {
        logger.error('button failed', { actionId, error: (error as Error).message });
        await tell(deps, click, ':warning: That did not go through on my side; please click again in a minute.');
      }
    });
  };

  /** The session a button acts on, when it exists and the click came from its channel; otherwise says why not. */
  const inChannelSession = async (click: ClickContext, sessionId: string, action: string) => {
    const session = isStoredId(sessionId) ? await deps.store.sessions.get(sessionId) : undefined;
    if (session === undefined) {
      await tell(deps, click, 'This session no longer exists.');
      return undefined;
    }
    if (!inSessionChannel(session, click.channelId)) {
      await auditRefusal(deps, session.id, {
        actor: click.userId,
        action,
        decision: outsideChannelRefusal(),
        detail: { channelId: click.channelId ?? null },
      });
      await tell(deps, click, OUTSIDE_CHANNEL_TEXT);
      return undefined;
    }
    return session;
  };

  const decideFromClick = (decision: 'approve' | 'deny') => async (click: ClickContext) => {
    const result = await decideApproval(deps, {
      approvalId: click.value,
      userId: click.userId,
      decision,
      channelId: click.channelId,
      ...(click.messageTs === undefined ? {} : { messageTs: click.messageTs }),
      ...(click.blocks === undefined ? {} : { blocks: click.blocks }),
    });
    if (!result.ok) await tell(deps, click, result.message);
  };

  onClick(ACTIONS.approve, decideFromClick('approve'));
  onClick(ACTIONS.deny, decideFromClick('deny'));

  // Opening a modal is not a decision, so a second click may open it again.
  onClick(
    ACTIONS.requestChanges,
    async (click) => {
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
    },
    { dedupe: false },
  );

  onClick(ACTIONS.hypothesis, async (click) => {
    let value: z.infer<typeof HypothesisValueSchema>;
    try {
      value = HypothesisValueSchema.parse(JSON.parse(click.value));
    } catch {
      await tell(deps, click, 'That button is malformed; choose the hypothesis by replying in the thread instead.');
      return;
    }
    const session = await inChannelSession(click, value.s, 'hypothesis.choose');
    if (session === undefined) return;
    await deps.workflow.deliverInput({
      sessionId: session.id,
      userId: click.userId,
      text: `test hypothesis ${value.h}`,
      source: 'button',
      action: { type: 'hypothesis', hypothesisId: value.h },
      messageKey: `action:${click.actionTs}:${click.userId}`,
    });
  });

  // Anyone the channel lets start this triage may say where it runs; the workflow checks the pick against what it
  // offered and takes only the first answer.
  onClick(ACTIONS.namespace, async (click) => {
    let value: z.infer<typeof NamespaceValueSchema>;
    try {
      value = NamespaceValueSchema.parse(JSON.parse(click.value));
    } catch {
      await tell(
        deps,
        click,
        'That button is malformed; nothing was changed. Reply in the thread with `in <namespace>` instead.',
      );
      return;
    }
    const session = await inChannelSession(click, value.s, 'namespace.choose');
    if (session === undefined) return;
    if (session.status !== 'open') {
      await tell(deps, click, 'This session is not open any more; nothing was changed.');
      return;
    }
    if (session.namespace !== '') {
      const here = code(escapeText(session.namespace));
      await tell(
        deps,
        click,
        session.namespace === value.n
          ? `This session already continues in ${here}; nothing was changed.`
          : `This session already continues in ${here}, so ${code(value.n)} was not taken. To look there too, start a triage for it: \`/triage <what is wrong> in ${value.n}\`.`,
      );
      return;
    }
    const channel = deps.policy.forChannel(session.channelId);
    const decision = channel === undefined ? noChannelPolicy(session.channelId) : checkIntent(channel, session.intent);
    if (!decision.allowed) {
      await auditRefusal(deps, session.id, {
        actor: click.userId,
        action: 'namespace.choose',
        decision,
        detail: { namespace: value.n },
      });
      await tell(deps, click, decision.reason);
      return;
    }
    await deps.workflow.deliverInput({
      sessionId: session.id,
      userId: click.userId,
      text: `in ${value.n}`,
      source: 'button',
      action: { type: 'namespace', namespace: value.n },
      messageKey: `action:${click.actionTs}:${click.userId}`,
    });
  });

  onClick(ACTIONS.resolved, async (click) => {
    const session = await inChannelSession(click, click.value, 'session.resolve');
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
      messageKey: `action:${click.actionTs}:${click.userId}`,
    });
  });

  onClick(
    ACTIONS.breakGlassOpen,
    async (click) => {
      const session = await inChannelSession(click, click.value, 'break-glass.open');
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
    },
    { dedupe: false },
  );

  // Registered last: Bolt runs every matching listener, and only this one answers ids none of the above knows.
  app.action<BlockAction>({ type: 'block_actions' }, async ({ ack, body, action }) => {
    const actionId = (action as { action_id?: string }).action_id ?? '';
    if (isKnownAction(actionId)) return;
    await ack();
    logger.info('button with an unknown action id', { actionId: actionId.slice(0, 64) });
    const message = body.message as { ts?: string; thread_ts?: string } | undefined;
    const channelId = body.channel?.id ?? body.container?.channel_id;
    if (channelId === undefined) return;
    const threadTs = message?.thread_ts ?? message?.ts;
    await ephemeral(deps, {
      channel: channelId,
      user: body.user.id,
      text: UNKNOWN_ACTION_TEXT,
      ...(threadTs === undefined ? {} : { threadTs }),
    });
  });
}
