import type * as z from 'zod';
import * as bg from './break-glass/break-glass-steps.js';
import type { WorkflowDeps } from './deps.js';
import { ProposeHandoffPayload, proposeHandoff } from './diagnostic/handoff-steps.js';
import { AskNamespacePayload, askNamespace } from './diagnostic/locate-steps.js';
import {
  RecordReadPayload,
  RecordTestPayload,
  RoutePayload,
  recordRead,
  recordTest,
  route,
} from './diagnostic/route/step.js';
import * as steps from './diagnostic/session-steps.js';
import { ValidateFixPayload, validateFix } from './diagnostic/validation-steps.js';
import { AwaitPayloadSchema, runAwait } from './notifier.js';
import { ReconcilePayload, reconcile } from './reconcile.js';
import * as review from './review/review-steps.js';
import { StepPayloadError, UnknownStepError } from './step-errors.js';

/**
 * The workflow function's dispatch table, keyed by the `step` names the state machine definitions use. Each entry
 * validates its payload before it runs, so a definition and its step can never silently disagree.
 */

export { StepPayloadError, UnknownStepError };

interface Entry {
  schema: z.ZodType;
  run: (deps: WorkflowDeps, payload: never) => Promise<unknown>;
}

const entry = <S extends z.ZodType>(
  schema: S,
  run: (deps: WorkflowDeps, payload: z.infer<S>) => Promise<unknown>,
): Entry => ({
  schema,
  run: run as Entry['run'],
});

export const WORKFLOW_STEPS: Readonly<Record<string, Entry>> = {
  /** Not a state: the schedule's (and `npm start`'s timer's) repair of what lost runs left behind. */
  reconcile: entry(ReconcilePayload, reconcile),
  resume: entry(steps.ResumePayload, steps.resume),
  evaluate: entry(steps.EvaluatePayload, steps.evaluate),
  'ask-namespace': entry(AskNamespacePayload, askNamespace),
  'memory-search': entry(steps.MemorySearchPayload, steps.memorySearch),
  'propose-handoff': entry(ProposeHandoffPayload, proposeHandoff),
  'handoff-denied': entry(steps.HandoffDeniedPayload, steps.handoffDenied),
  blackboard: entry(steps.BlackboardPayload, steps.blackboard),
  'timeout-notice': entry(steps.TimeoutNoticePayload, steps.timeoutNotice),
  'idle-timeout': entry(steps.IdleTimeoutPayload, steps.idleTimeout),
  route: entry(RoutePayload, route),
  'record-read': entry(RecordReadPayload, recordRead),
  'record-test': entry(RecordTestPayload, recordTest),
  'review-outcome': entry(review.ReviewOutcomePayload, review.reviewOutcome),
  'validate-fix': entry(ValidateFixPayload, validateFix),
  'store-memory': entry(steps.StoreMemoryPayload, steps.storeMemory),
  close: entry(steps.ClosePayload, steps.close),
  'notify-failure': entry(steps.NotifyFailurePayload, steps.notifyFailure),
  'plan-synthesize': entry(review.SynthesizePayload, review.planSynthesize),
  'plan-review-auto': entry(review.AutoReviewPayload, review.planReviewAuto),
  'plan-revise': entry(review.RevisePayload, review.planRevise),
  'review-decided': entry(review.ReviewDecidedPayload, review.reviewDecided),
  'postmortem-prepare': entry(review.PostmortemPreparePayload, review.postmortemPrepare),
  'break-glass-validate': entry(bg.ValidatePayload, bg.breakGlassValidate),
  'break-glass-warn': entry(bg.WarnPayload, bg.breakGlassWarn),
  'break-glass-expired': entry(bg.ExpiredPayload, bg.breakGlassExpired),
  'break-glass-denied': entry(bg.DeniedPayload, bg.breakGlassDenied),
  'break-glass-grant': entry(bg.GrantPayload, bg.breakGlassGrant),
  'break-glass-revoke': entry(bg.RevokePayload, bg.breakGlassRevoke),
};

export const NOTIFIER_STEPS: Readonly<Record<string, Entry>> = {
  await: entry(AwaitPayloadSchema, runAwait),
};

/**
 * Runs one step. Errors keep their class name (Retry and Catch match on it) and gain a `[step]` prefix, so the
 * failure notice in the thread can say which step failed.
 */
export async function runStep(
  table: Readonly<Record<string, Entry>>,
  deps: WorkflowDeps,
  event: unknown,
): Promise<unknown> {
  const step = typeof event === 'object' && event !== null ? (event as { step?: unknown }).step : undefined;
  const handler = typeof step === 'string' ? table[step] : undefined;
  if (!handler)
    throw new UnknownStepError(`Unknown step ${JSON.stringify(step)}; known: ${Object.keys(table).join(', ')}`);
  const parsed = handler.schema.safeParse(event);
  if (!parsed.success) {
    throw new StepPayloadError(
      `[${String(step)}] invalid payload: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'} ${i.message}`).join('; ')}`,
    );
  }
  try {
    return await handler.run(deps, parsed.data as never);
  } catch (error) {
    if (error instanceof Error && !error.message.startsWith('[')) {
      error.message = `[${String(step)}] ${error.message}`;
    }
    throw error;
  }
}
