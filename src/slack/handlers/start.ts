import { checkIntent, checkNamespace, noChannelPolicy } from '../../policy/channel-policy.js';
import { redactText } from '../../redact/index.js';
import type { SlackAppDeps } from '../deps.js';
import type { StartCommand } from '../grammar.js';
import { threadRootView } from '../notices.js';
import { auditRefusal } from './common.js';

export type StartOutcome = { ok: true; sessionId: string; threadTs: string } | { ok: false; message: string };

/**
 * Opens a session: policy first (nothing is posted for a refused request), then the thread root (a slash command
 * has no message of its own; a mention is its own root), then the workflow. Only validation, one post, DynamoDB
 * writes and StartExecution happen here, so Slack gets its answer well within 3 s. A request that names no
 * namespace starts without one: finding it means reading the cluster, which the workflow's triage does.
 */
export async function startTriage(
  deps: SlackAppDeps,
  input: { channelId: string; userId: string; command: StartCommand; threadTs?: string },
): Promise<StartOutcome> {
  const channel = deps.policy.forChannel(input.channelId);
  if (channel === undefined) {
    const decision = noChannelPolicy(input.channelId);
    if (!decision.allowed) {
      await auditRefusal(deps, undefined, { actor: input.userId, action: 'start', decision });
      return { ok: false, message: decision.reason };
    }
    return { ok: false, message: 'This channel has no calmops policy.' };
  }
  const intentDecision = checkIntent(channel, input.command.intent);
  if (!intentDecision.allowed) {
    await auditRefusal(deps, undefined, { actor: input.userId, action: 'start', decision: intentDecision });
    return { ok: false, message: intentDecision.reason };
  }
  if (input.command.namespace !== undefined) {
    const namespaceDecision = checkNamespace(channel, input.command.namespace);
    if (!namespaceDecision.allowed) {
      await auditRefusal(deps, undefined, { actor: input.userId, action: 'start', decision: namespaceDecision });
      return { ok: false, message: namespaceDecision.reason };
    }
  }

  // The request's words and its note are shown to the whole channel and kept: scrubbed first. A note is seen by
  // its author alone while typing, so a credential pasted into it must not become the channel's.
  const command: StartCommand = {
    ...input.command,
    text: redactText(input.command.text),
    ...(input.command.note === undefined ? {} : { note: redactText(input.command.note) }),
  };
  const root = threadRootView({ requester: input.userId, command, cluster: channel.cluster });
  let threadTs = input.threadTs;
  if (threadTs === undefined) {
    const posted = await deps.client.chat.postMessage({
      channel: input.channelId,
      text: root.text,
      blocks: root.blocks,
    });
    if (posted.ts === undefined)
      return { ok: false, message: 'Slack did not accept the thread message; nothing was started.' };
    threadTs = posted.ts;
  } else {
    await deps.client.chat.postMessage({
      channel: input.channelId,
      thread_ts: threadTs,
      text: root.text,
      blocks: root.blocks,
    });
  }

  try {
    const { sessionId } = await deps.workflow.startSession({
      channelId: input.channelId,
      threadTs,
      requester: input.userId,
      text: command.text,
      intent: command.intent,
      ...(input.command.namespace === undefined ? {} : { namespace: input.command.namespace }),
      cluster: channel.cluster,
      scope: [...channel.scope.namespaces],
      ...(command.note === undefined ? {} : { note: command.note }),
    });
    return { ok: true, sessionId, threadTs };
  } catch (error) {
    (deps.logger ?? console).error('session start failed', {
      channelId: input.channelId,
      error: (error as Error).message,
    });
    await deps.client.chat
      .postMessage({
        channel: input.channelId,
        thread_ts: threadTs,
        text: ':warning: I could not start this triage (the workflow did not accept it). Try again in a minute; if it keeps failing, tell the platform team.',
      })
      .catch(() => undefined);
    return { ok: false, message: 'The triage could not be started; the thread says why. Nothing is running.' };
  }
}
