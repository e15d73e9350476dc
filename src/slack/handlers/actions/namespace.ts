import * as z from 'zod';
import { ID_MAX, KUBE_LABEL_PATTERN } from '../../../limits.js';
import { escapeText } from '../../../mrkdwn/escape.js';
import { checkIntent, noChannelPolicy } from '../../../policy/channel-policy.js';
import type { SessionRecord } from '../../../store/sessions.js';
import { code } from '../../../views/limits.js';
import type { SlackAppDeps } from '../../deps.js';
import { auditRefusal } from '../common.js';
import { type ClickContext, clickMessageKey, sessionOfClick, tell } from './click.js';

const NamespaceValueSchema = z.object({
  s: z.string().min(1).max(ID_MAX),
  n: z.string().regex(KUBE_LABEL_PATTERN),
});

/** Why a session that already runs in a namespace does not take the clicked one. */
function alreadyPlaced(session: SessionRecord, namespace: string): string {
  const here = code(escapeText(session.namespace));
  return session.namespace === namespace
    ? `This session already continues in ${here}; nothing was changed.`
    : `This session already continues in ${here}, so ${code(namespace)} was not taken. To look there too, start a triage for it: \`/triage <what is wrong> in ${namespace}\`.`;
}

/**
 * A namespace button: says where a session whose namespace was not named runs. Anyone the channel lets start this
 * triage may say where it runs; the workflow checks the pick against what it offered and takes only the first answer.
 */
export async function chooseNamespace(deps: SlackAppDeps, click: ClickContext): Promise<void> {
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
  const session = await sessionOfClick(deps, click, value.s, 'namespace.choose');
  if (session === undefined) return;
  if (session.status !== 'open') {
    await tell(deps, click, 'This session is not open any more; nothing was changed.');
    return;
  }
  if (session.namespace !== '') {
    await tell(deps, click, alreadyPlaced(session, value.n));
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
    messageKey: clickMessageKey(click),
  });
}
