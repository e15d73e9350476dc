import * as z from 'zod';
import { classifyRequest } from '../../diagnosis/commands/index.js';
import { KubeName, SessionId, SUMMARY_MAX } from '../../limits.js';
import { escapeText } from '../../mrkdwn/escape.js';
import type { InboxMessage } from '../../store/inbox.js';
import type { SessionRecord } from '../../store/sessions.js';
import type { WorkflowRecord } from '../../store/workflow-records.js';
import { explainInvalidNamespace, InvalidNamespaceError, parseNamespace } from '../../triage/route/index.js';
import { replyView } from '../../views/intervention.js';
import { code } from '../../views/limits.js';
import { namespaceChosenView, namespaceQuestionView } from '../../views/namespace-choice.js';
import { postToSession } from '../common.js';
import type { WorkflowDeps } from '../deps.js';
import { recordEvent } from '../events.js';

/**
 * A session that starts without a namespace: its first triage locates one from the words and the cluster. When the
 * cluster does not settle it, the thread asks (one button per namespace the words matched, or "which namespace?"),
 * and the session waits for the answer, by button or by a reply naming it. The first answer settles the namespace
 * with one conditional write; the state machine then triages there.
 */

const CandidateSchema = z.object({ namespace: KubeName, why: z.string().max(300) });

export const AskNamespacePayload = z.object({
  step: z.literal('ask-namespace'),
  sessionId: SessionId,
  unlocated: z.object({
    reason: z.enum(['ambiguous', 'not-found']),
    message: z.string().max(1000),
    candidates: z.array(CandidateSchema).max(5),
  }),
});

export async function askNamespace(deps: WorkflowDeps, p: z.infer<typeof AskNamespacePayload>) {
  const session = await deps.store.sessions.getRequired(p.sessionId);
  const candidates = p.unlocated.candidates.filter((c) => explainInvalidNamespace(c.namespace) === undefined);
  const messageTs = await postToSession(
    deps,
    session,
    namespaceQuestionView({
      sessionId: session.id,
      reason: candidates.length > 0 ? p.unlocated.reason : 'not-found',
      message: p.unlocated.message,
      candidates,
    }),
  );
  await deps.artifacts.mutateWorkflow(session.id, deps.now(), (w) => ({
    ...w,
    namespaceChoice: { candidates, channelId: session.channelId, messageTs, askedAt: deps.now().toISOString() },
  }));
  await recordEvent(deps, session.id, 'namespace.unlocated', {
    summary: p.unlocated.message.slice(0, SUMMARY_MAX),
    data: { reason: p.unlocated.reason, candidates: candidates.map((c) => c.namespace) },
  });
  return { asked: candidates.length };
}

/** The thread input that can answer the question: a button's pick, or a reply naming a namespace. */
export type NamespaceAnswer = { from: 'button'; namespace: string } | { from: 'message' };

export type LocateRouteResult = { action: 'none'; reason: string } | { action: 'locate'; namespace: string };

const ns = (namespace: string) => code(escapeText(namespace.slice(0, 253)));

function namedIn(text: string, offered: readonly string[]): string | undefined {
  const bare = text
    .trim()
    .replace(/^[`'"]+|[`'".!?]+$/g, '')
    .toLowerCase();
  // A bare word answers only when it is one of the namespaces offered; anything else must say `in <namespace>`.
  if (offered.includes(bare)) return bare;
  try {
    return parseNamespace(text).namespace;
  } catch (error) {
    if (error instanceof InvalidNamespaceError) return undefined;
    throw error;
  }
}

/**
 * Routes one thread input of a session whose namespace is still open, or a namespace pick that arrives after it
 * was settled (a second click, a click on an older question). Nothing is read until the namespace is known.
 */
export async function routeNamespace(
  deps: WorkflowDeps,
  input: { session: SessionRecord; message: InboxMessage; workflow: WorkflowRecord; answer: NamespaceAnswer },
): Promise<LocateRouteResult> {
  const { session, message, workflow, answer } = input;
  const reply = (text: string) => postToSession(deps, session, replyView(session.id, text));
  const offered = (workflow.namespaceChoice?.candidates ?? []).map((c) => c.namespace);

  if (session.namespace !== '') {
    if (answer.from === 'button') {
      await reply(
        answer.namespace === session.namespace
          ? `This session already continues in ${ns(session.namespace)}; nothing was changed.`
          : `This session already continues in ${ns(session.namespace)}, so ${ns(answer.namespace)} was not taken. To look there too, start a triage for it: \`/triage <what is wrong> in ${escapeText(answer.namespace)}\`.`,
      );
    }
    return { action: 'none', reason: 'namespace already settled' };
  }

  const picked = answer.from === 'button' ? answer.namespace : namedIn(message.text, offered);
  if (picked === undefined) {
    // People talk in incident threads; plain chat gets an answer only when it asks for something.
    if (message.kind === 'message' && classifyRequest(message.text).kind === 'chat') {
      return { action: 'none', reason: 'conversation' };
    }
    await reply(
      offered.length > 0
        ? `I need the namespace before I read anything: pick one of ${offered.map(ns).join(', ')} above, or reply \`in <namespace>\`.`
        : 'I need the namespace before I read anything: reply `in <namespace>`, for example `in payments`.',
    );
    return { action: 'none', reason: 'namespace not named' };
  }
  if (answer.from === 'button' && !offered.includes(picked)) {
    await reply(
      `${ns(picked)} is not among the namespaces offered for this session; nothing was changed. Pick one of the current buttons, or reply \`in <namespace>\`.`,
    );
    return { action: 'none', reason: 'namespace not offered' };
  }
  const invalid = explainInvalidNamespace(picked);
  if (invalid !== undefined) {
    await reply(
      `${ns(picked)} is not a valid namespace: ${escapeText(invalid)}. Reply \`in <namespace>\` with its exact name.`,
    );
    return { action: 'none', reason: 'invalid namespace' };
  }

  const settled = await deps.store.sessions.settleNamespace(session.id, picked, deps.now());
  if (!settled.settled) {
    await reply(`This session already continues in ${ns(settled.session.namespace)}; nothing was changed.`);
    return { action: 'none', reason: 'namespace already settled' };
  }
  const why = workflow.namespaceChoice?.candidates.find((c) => c.namespace === picked)?.why;
  const chosen = namespaceChosenView({
    sessionId: session.id,
    namespace: picked,
    userId: message.userId,
    ...(why === undefined ? {} : { why }),
  });
  const question = workflow.namespaceChoice;
  const buttons =
    offered.length > 0 && question?.messageTs !== undefined && question.channelId !== undefined
      ? { channelId: question.channelId, ts: question.messageTs }
      : undefined;
  if (buttons !== undefined) {
    // The question becomes the answer: its buttons go, so nobody clicks a settled choice.
    await deps.slack
      .update(buttons.channelId, buttons.ts, chosen)
      .catch((error: unknown) => deps.logger.warn('could not update the namespace question', { error: String(error) }));
  }
  // A typed answer gets its own reply under it; a click is answered where it was made.
  if (answer.from === 'message' || buttons === undefined) {
    await postToSession(deps, settled.session, chosen);
  }
  await recordEvent(deps, session.id, 'namespace.chosen', {
    actor: message.userId,
    summary: `Continuing in ${picked}${why ? `: ${why}` : ''}`.slice(0, SUMMARY_MAX),
    data: { namespace: picked, from: answer.from, offered },
  });
  return { action: 'locate', namespace: picked };
}
