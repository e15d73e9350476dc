import { type DeliverInput, DeliverInputSchema } from './api.js';
import type { WorkflowDeps } from './deps.js';
import { resumeSession, SessionClosedError } from './session-lifecycle.js';
import { type DeliveryOutcome, tryDeliver } from './wait-delivery.js';

export interface DeliverResult {
  messageId: string;
  outcome: DeliveryOutcome | 'resumed';
}

/**
 * Buffers one thread input for the session and wakes its execution if it is waiting. Input is never lost: a busy
 * execution picks it up at its next wait, and an ended one (idle timeout, failure, a lost run) is replaced first.
 */
export async function deliverInput(
  deps: Pick<WorkflowDeps, 'store' | 'engine' | 'now' | 'stateMachines' | 'timeouts' | 'templates' | 'logger'>,
  input: DeliverInput,
): Promise<DeliverResult> {
  const parsed = DeliverInputSchema.parse(input);
  const session = await deps.store.sessions.getRequired(parsed.sessionId);
  if (session.status !== 'open') throw new SessionClosedError(`Session ${parsed.sessionId} is ${session.status}`);
  const message = await deps.store.inbox.append(
    parsed.sessionId,
    {
      kind: parsed.source,
      userId: parsed.userId,
      text: parsed.text,
      data: {
        messageKey: parsed.messageKey ?? null,
        ...(parsed.action ? { action: parsed.action } : {}),
      },
    },
    deps.now(),
  );
  const outcome = await tryDeliver(deps, parsed.sessionId);
  if (outcome === 'delivered' || outcome === 'recovered') return { messageId: message.id, outcome };
  // "Busy" is only true while the execution runs. One that failed, timed out, was aborted or is unknown to the
  // endpoint is replaced from the stored session, and the new one finds this message in the inbox.
  const resumed = await resumeSession(deps, parsed.sessionId);
  if (resumed.resumed) return { messageId: message.id, outcome: 'resumed' };
  return { messageId: message.id, outcome };
}
