import * as z from 'zod';
import { SCOPE_ENTRY } from '../cluster/read-only-guard.js';
import { Code, KubeName, NoteText, RecordId, SessionId, SlackId, SlackTs } from '../limits.js';
import type { TaskAnswer } from './engine.js';

/**
 * What the workflow offers the rest of calmops: start a session, deliver thread input to it, decide an approval it
 * waits on. One schema per message; the workflow parses each with it, and callers (the Slack function, the alert
 * route) build their messages from its input type.
 */

export const StartSessionInputSchema = z.object({
  /**
   * The id to open the session under, chosen by a caller that must be able to finish an interrupted start (an alert
   * delivery that died midway): starting again with the same id completes that session instead of opening another.
   */
  id: z
    .string()
    .regex(/^[0-9A-Za-z-]{1,64}$/)
    .optional(),
  channelId: SlackId,
  threadTs: SlackTs,
  requester: SlackId,
  text: NoteText,
  intent: Code.optional(),
  /** Absent when the request names none: the first triage locates it, and the session keeps what it found. */
  namespace: KubeName.optional(),
  cluster: z.string().min(1).max(128),
  /** The channel's namespaces (read-only-guard.ts `ReadScope`): every read of the session stays inside them. */
  scope: z.array(z.string().regex(SCOPE_ENTRY)).min(1).max(50),
  note: z.string().max(500).optional(),
});
export type StartSessionInput = z.input<typeof StartSessionInputSchema>;

/** What a button in the thread asks of the session, delivered with the click. */
const ThreadActionSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('hypothesis'), hypothesisId: RecordId }),
  z.object({ type: z.literal('resolved') }),
  z.object({ type: z.literal('break-glass'), requestId: RecordId }),
  z.object({ type: z.literal('namespace'), namespace: KubeName }),
  z.object({
    type: z.literal('handoff'),
    approvalId: RecordId,
    decision: z.enum(['approve', 'deny']),
  }),
]);

export const DeliverInputSchema = z.object({
  sessionId: SessionId,
  userId: SlackId,
  text: z.string().max(40_000),
  source: z.enum(['message', 'mention', 'button']),
  action: ThreadActionSchema.optional(),
  /**
   * What identifies this input across retries: the Slack message ts or event id, a button's action_ts. The same
   * key delivered twice is consumed once.
   */
  messageKey: z.string().min(1).max(256).optional(),
});
export type DeliverInput = z.input<typeof DeliverInputSchema>;

/** A human decision on an approval, as the Slack function sends it to the approval's waiting task. */
const ApprovalOutcomeSchema = z.object({
  decision: z.enum(['approve', 'deny', 'request-changes']),
  userId: SlackId,
  note: NoteText.optional(),
  decidedAt: z.string(),
});
export type ApprovalOutcome = z.input<typeof ApprovalOutcomeSchema>;

/**
 * The same decision as a step reads it back from SendTaskSuccess: who and when may be missing from an execution
 * started before they were sent, and what else Step Functions carries along is kept.
 */
export const DecisionSchema = ApprovalOutcomeSchema.partial({ userId: true, decidedAt: true }).passthrough();

/** The workflow's operations as its callers see them; production binds them to Step Functions. */
export interface WorkflowApi {
  startSession(input: StartSessionInput): Promise<{ sessionId: string; executionArn: string }>;
  deliverInput(input: DeliverInput): Promise<unknown>;
  /** Hands the decision to the approval's waiting task; `closed` when nobody waits on it any more. */
  sendTaskSuccess(taskToken: string, output: ApprovalOutcome): Promise<TaskAnswer>;
}
