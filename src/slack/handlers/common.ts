import { SUMMARY_MAX } from '../../limits.js';
import type { ApprovalFacts, PolicyDecision } from '../../policy/channel-policy.js';
import type { ApprovalRecord } from '../../store/approvals.js';
import type { SlackAppDeps } from '../deps.js';

export type ChannelAccess = 'ok' | 'dm' | 'not-member';

const accessCache = new WeakMap<SlackAppDeps, Map<string, number>>();
const ACCESS_TTL_MS = 60_000;

function slackErrorCode(error: unknown): string | undefined {
  const data = (error as { data?: { error?: unknown } } | undefined)?.data;
  return typeof data?.error === 'string' ? data.error : undefined;
}

/**
 * Whether the bot can run a session in the channel. Only a positive answer is cached: once the bot is invited,
 * the next attempt sees it, while a channel it is known to be in costs no extra Web API call for a minute.
 */
export async function channelAccess(deps: SlackAppDeps, channelId: string): Promise<ChannelAccess> {
  if (channelId.startsWith('D')) return 'dm';
  const cache = accessCache.get(deps) ?? new Map<string, number>();
  accessCache.set(deps, cache);
  const now = Date.now();
  if ((cache.get(channelId) ?? 0) > now) return 'ok';
  try {
    const result = await deps.client.conversations.info({ channel: channelId });
    const channel = result.channel;
    if (channel?.is_im === true || channel?.is_mpim === true) return 'dm';
    if (channel?.is_member !== true) return 'not-member';
    cache.set(channelId, now + ACCESS_TTL_MS);
    return 'ok';
  } catch (error) {
    const code = slackErrorCode(error);
    if (code === 'channel_not_found' || code === 'not_in_channel') return 'not-member';
    throw error;
  }
}

/** An ephemeral reply; a failure to deliver it is logged, never thrown, so it cannot undo the work it reports. */
export async function ephemeral(
  deps: SlackAppDeps,
  input: { channel: string; user: string; text: string; threadTs?: string },
): Promise<void> {
  try {
    await deps.client.chat.postEphemeral({
      channel: input.channel,
      user: input.user,
      text: input.text,
      ...(input.threadTs === undefined ? {} : { thread_ts: input.threadTs }),
    });
  } catch (error) {
    (deps.logger ?? console).warn('ephemeral reply failed', { channel: input.channel, error: slackErrorCode(error) });
  }
}

/** Refusals are part of the session's audit trail: who tried what, and why it was refused. */
export async function auditRefusal(
  deps: SlackAppDeps,
  sessionId: string | undefined,
  input: {
    actor: string;
    action: string;
    decision: Extract<PolicyDecision, { allowed: false }>;
    detail?: Record<string, unknown>;
  },
): Promise<void> {
  const logger = deps.logger ?? console;
  logger.info('policy refusal', { sessionId, actor: input.actor, action: input.action, code: input.decision.code });
  if (sessionId === undefined) return;
  try {
    await deps.store.timeline.append(sessionId, {
      type: 'policy.refused',
      actor: input.actor,
      summary: `${input.action} refused: ${input.decision.reason}`.slice(0, SUMMARY_MAX),
      data: { action: input.action, code: input.decision.code, ...input.detail },
    });
  } catch (error) {
    logger.error('could not audit a refusal', { sessionId, error: (error as Error).message });
  }
}

function stringField(data: Record<string, unknown>, key: string): string | undefined {
  const value = data[key];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Where an approval's message lives and who it concerns; the notifier keeps these in the approval's `data`. */
export function approvalFacts(
  approval: ApprovalRecord,
): ApprovalFacts & { channelId?: string; messageTs?: string; threadTs?: string } {
  const data = approval.data ?? {};
  const mutating = data['planHasMutatingSteps'];
  const requester = approval.requester ?? stringField(data, 'requester');
  const approverUserId = stringField(data, 'approverUserId');
  const planAuthor = stringField(data, 'planAuthor');
  const channelId = stringField(data, 'channelId');
  const messageTs = stringField(data, 'messageTs');
  const threadTs = stringField(data, 'threadTs');
  return {
    kind: approval.kind,
    ...(requester === undefined ? {} : { requester }),
    ...(approverUserId === undefined ? {} : { approverUserId }),
    ...(planAuthor === undefined ? {} : { planAuthor }),
    ...(typeof mutating === 'boolean' ? { planHasMutatingSteps: mutating } : {}),
    ...(channelId === undefined ? {} : { channelId }),
    ...(messageTs === undefined ? {} : { messageTs }),
    ...(threadTs === undefined ? {} : { threadTs }),
  };
}

export function nowOf(deps: SlackAppDeps): Date {
  return deps.now?.() ?? new Date();
}
