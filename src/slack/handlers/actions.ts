import type { App, BlockAction, ButtonAction } from '@slack/bolt';
import { z } from 'zod';
import type { ApprovalRecord } from '../../store/approvals.js';
import {
  ApprovalAlreadyDecidedError,
  ApprovalExpiredError,
  ApprovalNotAllowedError,
  ApprovalNotFoundError,
} from '../../store/errors.js';
import type { ApprovalOutcome, SlackAppDeps } from '../deps.js';
import { checkApproval, checkHandoff, noChannelPolicy, type PolicyDecision } from '../policy.js';
import type { KnownBlock } from '../views/blocks.js';
import { decidedView } from '../views/decided.js';
import { breakGlassModal, requestChangesModal } from '../views/modals.js';
import { approvalFacts, auditRefusal, ephemeral, nowOf } from './common.js';

export const ACTIONS = {
  approve: 'approval_approve',
  deny: 'approval_deny',
  requestChanges: 'approval_request_changes',
  /** Matched by prefix: every hypothesis button of one message needs its own action_id. */
  hypothesis: /^hypothesis_choose(:\d+)?$/,
  resolved: 'session_resolved',
  breakGlassOpen: 'breakglass_open',
} as const;

const OUTCOME_WORDS = {
  approve: 'approved',
  deny: 'denied',
  'request-changes': 'changes-requested',
} as const;

export const EXPIRED_TEXT = 'This approval has expired; nothing was changed. The thread shows what happens next.';

const HypothesisValueSchema = z.object({ s: z.string().min(1).max(64), h: z.string().min(1).max(64) });

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
  const approval = /^[A-Za-z0-9._:-]{1,64}$/.test(approvalId) ? await deps.store.approvals.get(approvalId) : undefined;
  if (approval === undefined) return { ok: false, message: 'This approval no longer exists; nothing was changed.' };
  if (isExpired(approval, now)) return { ok: false, message: EXPIRED_TEXT };
  if (approval.status !== 'pending') {
    const by = approval.decidedBy === undefined ? '' : ` by <@${approval.decidedBy}>`;
    return { ok: false, message: `This was already decided${by} (${approval.status}); nothing was changed.` };
  }
  return { ok: true, approval, facts: approvalFacts(approval) };
}

async function authorize(
  deps: SlackAppDeps,
  approval: ApprovalRecord,
  facts: ReturnType<typeof approvalFacts>,
  userId: string,
  action: string,
): Promise<PolicyDecision> {
  const session = await deps.store.sessions.get(approval.sessionId);
  const channelId = facts.channelId ?? session?.channelId;
  const channel = channelId === undefined ? undefined : deps.policy.forChannel(channelId);
  const decision =
    channel === undefined
      ? noChannelPolicy(channelId ?? 'unknown')
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
  return decision;
}

/**
 * Decides an approval once: one conditional update in the store picks the single winner, who alone sends
 * SendTaskSuccess and updates the message. Everyone else (a second click, a second approver, a late click) gets an
 * ephemeral answer and changes nothing.
 */
export async function decideApproval(
  deps: SlackAppDeps,
  input: {
    approvalId: string;
    userId: string;
    decision: ApprovalOutcome['decision'];
    note?: string;
    channelId?: string;
    messageTs?: string;
    blocks?: KnownBlock[];
  },
): Promise<{ ok: true } | { ok: false; message: string }> {
  const now = nowOf(deps);
  const loaded = await loadDecidable(deps, input.approvalId, now);
  if (!loaded.ok) return loaded;
  const { approval, facts } = loaded;
  const policy = await authorize(deps, approval, facts, input.userId, `approval.${input.decision}`);
  if (!policy.allowed) return { ok: false, message: policy.reason };
  if (approval.token === undefined) {
    return { ok: false, message: 'This request is still being set up; try again in a few seconds.' };
  }

  let decided: ApprovalRecord;
  try {
    decided = await deps.store.approvals.decide(
      approval.id,
      input.decision === 'approve' ? 'approved' : 'rejected',
      input.userId,
      now,
      input.decision === 'request-changes'
        ? { reason: `request-changes${input.note === undefined ? '' : `: ${input.note}`}`.slice(0, 2000) }
        : input.note === undefined
          ? {}
          : { reason: input.note.slice(0, 2000) },
    );
  } catch (error) {
    if (error instanceof ApprovalExpiredError) return { ok: false, message: EXPIRED_TEXT };
    if (error instanceof ApprovalAlreadyDecidedError) {
      const current = await deps.store.approvals.get(approval.id);
      if (current !== undefined && isExpired(current, now)) return { ok: false, message: EXPIRED_TEXT };
      const by = current?.decidedBy === undefined ? '' : ` by <@${current.decidedBy}>`;
      return { ok: false, message: `This was already decided${by}; nothing was changed.` };
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

  const decidedAt = decided.decidedAt ?? now.toISOString();
  const outcome: ApprovalOutcome = {
    decision: input.decision,
    userId: input.userId,
    decidedAt,
    ...(input.note === undefined ? {} : { note: input.note }),
  };
  await deps.store.timeline
    .append(approval.sessionId, {
      type: 'approval.decided',
      actor: input.userId,
      summary: `${approval.kind} ${input.decision}${input.note === undefined ? '' : `: ${input.note}`}`.slice(0, 2000),
      data: { approvalId: approval.id, kind: approval.kind, decision: input.decision },
    })
    .catch((error: Error) => (deps.logger ?? console).error('timeline append failed', { error: error.message }));
  await deps.workflow.sendTaskSuccess(approval.token, outcome);

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

  const decideFromClick = (decision: 'approve' | 'deny') => async (click: ClickContext) => {
    const result = await decideApproval(deps, {
      approvalId: click.value,
      userId: click.userId,
      decision,
      ...(click.channelId === undefined ? {} : { channelId: click.channelId }),
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
      const policy = await authorize(deps, loaded.approval, loaded.facts, click.userId, 'approval.request-changes');
      if (!policy.allowed) {
        await tell(deps, click, policy.reason);
        return;
      }
      await deps.client.views.open({
        trigger_id: click.triggerId,
        view: requestChangesModal({
          approvalId: loaded.approval.id,
          ...(click.channelId === undefined ? {} : { channelId: click.channelId }),
          ...(click.messageTs === undefined ? {} : { messageTs: click.messageTs }),
        }),
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
    await deps.workflow.deliverInput({
      sessionId: value.s,
      userId: click.userId,
      text: `test hypothesis ${value.h}`,
      source: 'button',
      action: { type: 'hypothesis', hypothesisId: value.h },
      messageKey: `action:${click.actionTs}:${click.userId}`,
    });
  });

  onClick(ACTIONS.resolved, async (click) => {
    const session = await deps.store.sessions.get(click.value);
    if (session === undefined) {
      await tell(deps, click, 'This session no longer exists.');
      return;
    }
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
      const session = await deps.store.sessions.get(click.value);
      if (session === undefined || session.status !== 'open') {
        await tell(deps, click, 'This session is not open, so there is nothing to override.');
        return;
      }
      await deps.client.views.open({
        trigger_id: click.triggerId,
        view: breakGlassModal({
          sessionId: session.id,
          channelId: session.channelId,
          ...(session.threadTs === undefined ? {} : { threadTs: session.threadTs }),
          currentState: session.state,
        }),
      });
    },
    { dedupe: false },
  );
}
