import type { InboxMessage } from '../../../store/inbox.js';
import type { WorkflowDeps } from '../../deps.js';
import { recordEvent } from '../../events.js';

/**
 * Exactly-once thread input (docs/workflow.md): the route step takes the oldest inbox message, marks its key as
 * consumed on the workflow item before it does anything with it, records `input.consumed` once, and removes the
 * message from the inbox only after the message was handled (`finishInput`).
 */

/**
 * Takes the oldest buffered input exactly once: a key seen before (a retried append) is dropped. The message stays
 * in the inbox, marked as taken, until the route step that handles it has finished (`finishInput`), so a step that
 * dies midway (a crash, a lost run) leaves it to be handled again rather than lost; its consumption is still
 * recorded once.
 */
export async function consume(deps: WorkflowDeps, sessionId: string): Promise<InboxMessage | undefined> {
  for (let round = 0; round < 5; round++) {
    const message = await deps.store.inbox.peekOldest(sessionId);
    if (!message) return undefined;
    const key = typeof message.data?.['messageKey'] === 'string' ? (message.data['messageKey'] as string) : message.id;
    const seen: { state: 'new' | 'again' | 'duplicate'; markedAt?: string | undefined } = { state: 'new' };
    const at = deps.now().toISOString();
    await deps.artifacts.mutateWorkflow(sessionId, deps.now(), (w) => {
      if (w.lastInboxId === message.id) {
        seen.state = 'again';
        seen.markedAt = w.lastInboxAt;
        return w;
      }
      seen.state = w.consumedKeys.includes(key) ? 'duplicate' : 'new';
      if (seen.state === 'duplicate') return w;
      return { ...w, consumedKeys: [...w.consumedKeys, key], lastInboxId: message.id, lastInboxAt: at };
    });
    if (seen.state === 'duplicate') {
      await deps.store.inbox.remove(sessionId, message.id);
      await recordEvent(deps, sessionId, 'input.duplicate', {
        summary: `Dropped a repeat of ${key}`,
        data: { messageId: message.id, key },
      });
      continue;
    }
    await deps.store.inbox.take(sessionId, message.id, deps.now());
    if (seen.state === 'new' || !(await consumedEventRecorded(deps, sessionId, message.id, seen.markedAt))) {
      await recordEvent(deps, sessionId, 'input.consumed', {
        actor: message.userId,
        summary: message.text.slice(0, 300),
        data: { messageId: message.id, key, kind: message.kind },
      });
    }
    return message;
  }
  return undefined;
}

/** Whether a route step that died after marking the message also recorded its consumption. */
async function consumedEventRecorded(
  deps: WorkflowDeps,
  sessionId: string,
  messageId: string,
  markedAt: string | undefined,
): Promise<boolean> {
  const since = markedAt === undefined ? undefined : new Date(Date.parse(markedAt) - 1).toISOString();
  const events = await deps.store.timeline.list(sessionId, since === undefined ? {} : { after: { at: since, seq: 0 } });
  return events.some((e) => e.type === 'input.consumed' && e.data?.['messageId'] === messageId);
}

/** The message was handled (or its handling failed and was told in the thread): it leaves the inbox. */
export async function finishInput(deps: WorkflowDeps, sessionId: string, messageId: string): Promise<void> {
  await deps.store.inbox.remove(sessionId, messageId);
}
