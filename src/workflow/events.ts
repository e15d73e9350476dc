import { SUMMARY_MAX } from '../limits.js';
import { redactDeep, redactText } from '../redact/index.js';
import type { EventSink, WorkflowEvent } from '../review/events.js';
import type { WorkflowDeps } from './deps.js';

/**
 * Structured events: every transition is one JSON log line (Powertools Logger) and one timeline entry, so an incident
 * can be replayed from its audit trail alone and searched in the logs by session id.
 */
export async function recordEvent(
  deps: Pick<WorkflowDeps, 'logger' | 'store' | 'now'>,
  sessionId: string,
  type: string,
  raw: { summary?: string; data?: Record<string, unknown>; actor?: string } = {},
): Promise<void> {
  // What people typed reaches events (a request's words, a note, a thread reply): scrubbed before it is logged or
  // kept, like everything else calmops shows.
  const input = {
    ...raw,
    ...(raw.summary === undefined ? {} : { summary: redactText(raw.summary) }),
    ...(raw.data === undefined ? {} : { data: redactDeep(raw.data) }),
  };
  deps.logger.info(type, {
    event: type,
    sessionId,
    ...(input.summary ? { summary: input.summary } : {}),
    ...input.data,
  });
  await deps.store.timeline.append(
    sessionId,
    {
      type,
      actor: input.actor ?? 'calmops',
      ...(input.summary ? { summary: input.summary.slice(0, SUMMARY_MAX) } : {}),
      ...(input.data ? { data: input.data } : {}),
    },
    deps.now(),
  );
}

/** An EventSink for the review module's events that writes each one as it comes. */
export function timelineSink(deps: Pick<WorkflowDeps, 'logger' | 'store' | 'now'>): EventSink {
  return {
    async emit(event: WorkflowEvent) {
      await recordEvent(deps, event.sessionId, event.type, { data: event.detail });
    },
  };
}
