import * as z from 'zod';
import { evidenceFromEnvelope } from '../../diagnosis/evidence-sources.js';
import { describeTarget, isStillPresent, validationTargetsOf } from '../../diagnosis/fix-validation.js';
import { describeResource } from '../../diagnosis/resource-text.js';
import { SessionId, SUMMARY_MAX } from '../../limits.js';
import { fixValidatedEvent } from '../../memory/metrics.js';
import { TriageEnvelopeSchema } from '../../triage/envelope/index.js';
import { fixValidationView } from '../../views/validation.js';
import { postToSession, StepInputError } from '../common.js';
import type { WorkflowDeps } from '../deps.js';
import { recordEvent } from '../events.js';
import { addEvidence, type ValidationResult } from '../progress.js';

/**
 * Validating a reported fix. "Resolved" sends the session back to GATHERING with a validation context (the
 * confirmed root cause and its resource); the cluster reader runs the intent's template again, and this step lets
 * the evidence rules judge the fresh envelope: the fix holds when the root cause is no longer among the findings of
 * medium severity or worse and the triage read enough to say so. Anything else keeps the session open.
 */

export const ValidateFixPayload = z.object({
  step: z.literal('validate-fix'),
  sessionId: SessionId,
  envelope: z.unknown(),
});

type FixValidationOutcome = 'validated' | 'still-present' | 'incomplete';

export interface ValidateFixResult {
  passed: boolean;
  outcome: FixValidationOutcome;
  reason: string;
  attempts: number;
  state: string;
}

export async function validateFix(
  deps: WorkflowDeps,
  p: z.infer<typeof ValidateFixPayload>,
): Promise<ValidateFixResult> {
  const envelope = TriageEnvelopeSchema.parse(p.envelope);
  const before = await deps.artifacts.getOrCreateWorkflow(p.sessionId, deps.now());
  const context = before.validation;
  if (!context) {
    throw new StepInputError(
      `Session ${p.sessionId} has no fix validation in progress: a fresh triage only judges a fix after "resolved"`,
    );
  }
  const targets = validationTargetsOf(context);
  const at = deps.now().toISOString();
  const progress = await addEvidence(deps, p.sessionId, evidenceFromEnvelope(envelope, at), (w) => ({
    ...w,
    validationAttempts: w.validationAttempts + 1,
  }));
  let verdict: ValidationResult | undefined = progress.validations.at(-1);
  if (!verdict) {
    // The rules saw no triage newer than the fix report (a clock that stood still): never pass silently.
    verdict = {
      passed: false,
      reason: 'Not validated: evidence incomplete (the fresh triage is not newer than the fix report)',
    };
    const event = fixValidatedEvent(verdict.passed, verdict.reason);
    await recordEvent(deps, p.sessionId, event.type, { summary: event.summary, data: event.data });
  }
  const stillPresent = envelope.findings.filter((f) => isStillPresent(targets, f));
  const outcome: FixValidationOutcome = verdict.passed
    ? 'validated'
    : stillPresent.length > 0
      ? 'still-present'
      : 'incomplete';
  const attempts = progress.workflow.validationAttempts;
  await postToSession(
    deps,
    progress.session,
    fixValidationView({
      sessionId: p.sessionId,
      outcome,
      targets: targets.map(describeTarget),
      stillPresent: stillPresent.map((f) => ({
        code: f.code,
        severity: f.severity,
        where: describeResource(f.resource),
        message: f.message,
        evidence: f.evidence,
      })),
      findings: envelope.findings.length,
      completeness: envelope.evidence.completeness,
      threshold: envelope.evidence.threshold,
      gaps: envelope.evidence.gaps.map((g) => `${g.type}: ${g.reason}${g.detail ? ` (${g.detail})` : ''}`),
      state: progress.session.state,
      attempt: attempts,
    }),
  );
  return {
    passed: verdict.passed,
    outcome,
    reason: verdict.reason.slice(0, SUMMARY_MAX),
    attempts,
    state: progress.session.state,
  };
}
