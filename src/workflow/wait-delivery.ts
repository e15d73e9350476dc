import type { WorkflowDeps } from './deps.js';
import type { TaskAnswer } from './engine.js';

/**
 * Exactly-once delivery of thread input to a waiting execution. Two parties race: whoever appends input tries to
 * deliver, and the notifier, after storing a fresh wait token, tries too. The conditional claim of the wait item
 * picks one sender per wait; the route step consumes the oldest inbox message and remembers its key, so a repeated
 * send (after a crash between claim and send, or a retried append) changes nothing.
 */

export type DeliveryOutcome = 'delivered' | 'recovered' | 'empty' | 'busy' | 'stale';

/**
 * A claim's lease: a claimed wait whose send never happened (the claimer died) is re-sent after this long. A send
 * takes milliseconds; a token that was used answers TaskTimedOut, so a re-send never wakes a task twice.
 */
const RECOVER_AFTER_MS = 5_000;

function send(deps: Pick<WorkflowDeps, 'engine'>, token: string, messageId: string): Promise<TaskAnswer> {
  return deps.engine.succeed(token, { messageId });
}

export async function tryDeliver(
  deps: Pick<WorkflowDeps, 'store' | 'engine' | 'now'>,
  sessionId: string,
): Promise<DeliveryOutcome> {
  const oldest = await deps.store.inbox.peekOldest(sessionId);
  if (!oldest) return 'empty';
  const now = deps.now();
  const wait = await deps.store.waits.claim(sessionId, now);
  if (wait) return (await send(deps, wait.token, oldest.id)) === 'sent' ? 'delivered' : 'stale';
  const current = await deps.store.waits.get(sessionId);
  if (
    current?.claimedAt &&
    current.expiresAt > now.toISOString() &&
    now.getTime() - Date.parse(current.claimedAt) > RECOVER_AFTER_MS
  ) {
    // The claimer may have crashed before sending. Re-sending a token that was used is answered TaskTimedOut.
    return (await send(deps, current.token, oldest.id)) === 'sent' ? 'recovered' : 'busy';
  }
  return 'busy';
}
