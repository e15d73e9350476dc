import { isStoredId } from '../../limits.js';
import type { PolicyDecision } from '../../policy/channel-policy.js';
import type { ModalKind } from '../../store/modals.js';
import type { SessionRecord } from '../../store/sessions.js';
import type { ModalView } from '../../views/blocks.js';
import type { SlackAppDeps } from '../deps.js';
import { auditRefusal, nowOf } from './common.js';

/**
 * Session commands (`status`, `breakglass`), buttons and modals act on one session, and only from the channel that
 * session runs in. Elsewhere (another channel, a DM, a channel the bot is not in) a session id is treated as unknown,
 * so it cannot be used to read a session's state or to file requests into its thread from outside.
 */

export const OUTSIDE_CHANNEL_TEXT =
  'That session belongs to another channel; nothing was changed. Use the buttons and commands in its own thread.';

export function outsideChannelRefusal(): Extract<PolicyDecision, { allowed: false }> {
  return { allowed: false, code: 'outside-session-channel', reason: OUTSIDE_CHANNEL_TEXT };
}

export function inSessionChannel(session: Pick<SessionRecord, 'channelId'>, channelId: string | undefined): boolean {
  return channelId !== undefined && session.channelId === channelId;
}

/**
 * The session, when it runs in `channelId`. A session of another channel is refused (and the attempt written to its
 * timeline) and reported as absent, so the answer does not tell whether the id exists.
 */
export async function sessionInChannel(
  deps: SlackAppDeps,
  input: { sessionId: string; channelId: string | undefined; userId: string; action: string },
): Promise<SessionRecord | undefined> {
  const session = isStoredId(input.sessionId) ? await deps.store.sessions.get(input.sessionId) : undefined;
  if (session === undefined) return undefined;
  if (inSessionChannel(session, input.channelId)) return session;
  await auditRefusal(deps, session.id, {
    actor: input.userId,
    action: input.action,
    decision: outsideChannelRefusal(),
    detail: { channelId: input.channelId ?? null },
  });
  return undefined;
}

/** What a modal is opened for; written to the store once Slack has opened it. */
export interface ModalPurpose {
  kind: ModalKind;
  userId: string;
  sessionId: string;
  channelId: string;
  threadTs?: string;
  approvalId?: string;
  messageTs?: string;
}

/**
 * Opens a modal and records that it was opened, for whom and for what. A submission is accepted only against this
 * record (see `ModalRepository.submitted`); a modal whose record could not be written cannot be submitted, which the
 * person learns when they submit it.
 */
export async function openRecordedModal(
  deps: SlackAppDeps,
  input: { triggerId: string; view: ModalView; purpose: ModalPurpose },
): Promise<void> {
  const opened = await deps.client.views.open({ trigger_id: input.triggerId, view: input.view });
  const viewId = opened.view?.id;
  if (viewId === undefined) {
    (deps.logger ?? console).warn('views.open returned no view id; the modal cannot be submitted', {
      kind: input.purpose.kind,
    });
    return;
  }
  await deps.store.modals.opened({ viewId, ...input.purpose }, nowOf(deps));
}
