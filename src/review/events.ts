/**
 * Structured workflow events (the plan contract, docs/concepts.md). Every transition is logged as one JSON line and written to the session
 * timeline, so an incident can be replayed from its audit trail alone.
 */
const WORKFLOW_EVENT_TYPES = [
  'intent_captured',
  'discovery_done',
  'plan_synthesis_start',
  'plan_synthesis_complete',
  'schema_guard_pass',
  'schema_guard_fail',
  'regeneration_attempt',
  'human_needed',
  'automated_review_pass',
  'automated_review_fail',
  'human_review_approved',
  'human_review_changes_requested',
  'plan_revised',
  'review_rejected',
  'review_expired',
  'review_autonomous_approved',
] as const;
type WorkflowEventType = (typeof WORKFLOW_EVENT_TYPES)[number];

export interface WorkflowEvent {
  type: WorkflowEventType;
  sessionId: string;
  at: string;
  detail: Record<string, unknown>;
}

export interface EventSink {
  emit(event: WorkflowEvent): void | Promise<void>;
}

/** Collects events in memory; the workflow function drains them into the timeline after each step. */
export class CollectingEventSink implements EventSink {
  readonly events: WorkflowEvent[] = [];
  emit(event: WorkflowEvent): void {
    this.events.push(event);
  }
}
