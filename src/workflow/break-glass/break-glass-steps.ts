import * as z from 'zod';
import {
  type BreakGlassAuditEvent,
  BreakGlassValidationError,
  breakGlassAudit,
  grantOverride,
  type Override,
  type ValidBreakGlassRequest,
  validateBreakGlassRequest,
} from '../../diagnosis/break-glass.js';
import { RecordId, SessionId, SUMMARY_MAX } from '../../limits.js';
import { breakGlassEvent } from '../../memory/metrics.js';
import type { SessionRecord } from '../../store/sessions.js';
import {
  breakGlassGrantedView,
  breakGlassOutcomeView,
  breakGlassRevokedView,
  breakGlassWarningView,
} from '../../views/break-glass.js';
import { DecisionSchema } from '../api.js';
import { expireApproval, postToSession, StepInputError } from '../common.js';
import type { WorkflowDeps } from '../deps.js';
import { recordEvent } from '../events.js';

/**
 * The break-glass machine's steps (ADR-005): validate, warn in red, grant for the time limit, revoke automatically.
 * Every step writes an enhanced audit entry to the timeline.
 */

const P = { sessionId: SessionId, requestId: RecordId };
export const ValidatePayload = z.object({ step: z.literal('break-glass-validate'), ...P });
export const WarnPayload = z.object({ step: z.literal('break-glass-warn'), ...P });
export const ExpiredPayload = z.object({ step: z.literal('break-glass-expired'), ...P });
export const DeniedPayload = z.object({ step: z.literal('break-glass-denied'), ...P, decision: DecisionSchema });
export const GrantPayload = z.object({ step: z.literal('break-glass-grant'), ...P, decision: DecisionSchema });
export const RevokePayload = z.object({ step: z.literal('break-glass-revoke'), ...P });

/** The request as the Slack side stored it (an approval item of kind break-glass). */
async function loadRequest(deps: WorkflowDeps, requestId: string): Promise<Record<string, unknown> | undefined> {
  return deps.artifacts.getApprovalItem(requestId);
}

function requestInput(item: Record<string, unknown>, sessionId: string) {
  const data = (item['data'] ?? {}) as Record<string, unknown>;
  return {
    sessionId,
    requester: item['requester'] ?? data['requester'],
    justification: data['justification'],
    seniorApprover: data['approverUserId'] ?? data['approver'] ?? data['seniorApprover'],
    timeLimitMinutes: data['timeLimitMinutes'],
    skipToState: data['targetState'] ?? data['skipToState'],
    change: data['change'],
  };
}

async function validated(
  deps: WorkflowDeps,
  session: SessionRecord,
  requestId: string,
): Promise<ValidBreakGlassRequest> {
  const item = await loadRequest(deps, requestId);
  if (item?.['kind'] !== 'break-glass' || item['sessionId'] !== session.id) {
    throw new BreakGlassValidationError({ sessionId: [`No break-glass request ${requestId} for this session.`] });
  }
  return validateBreakGlassRequest(requestInput(item, session.id), {
    session: { id: session.id, state: session.state },
  });
}

async function audit(
  deps: WorkflowDeps,
  event: BreakGlassAuditEvent,
  subject: Override | ValidBreakGlassRequest | { sessionId: string; requester?: string },
  actor: string,
  details: Record<string, unknown> = {},
): Promise<void> {
  const entry = breakGlassAudit(event, subject, { at: deps.now(), actor, details });
  const timeline = breakGlassEvent(entry);
  await recordEvent(deps, subject.sessionId, timeline.type, {
    actor: timeline.actor,
    summary: timeline.summary,
    data: timeline.data,
  });
}

function facts(request: ValidBreakGlassRequest, requestId: string) {
  return {
    sessionId: request.sessionId,
    requestId,
    requester: request.requester,
    approver: request.seniorApprover,
    justification: request.justification,
    targetState: request.skipToState,
    timeLimitMinutes: request.timeLimitMinutes,
    ...(request.change ? { change: request.change } : {}),
  };
}

export async function breakGlassValidate(deps: WorkflowDeps, p: z.infer<typeof ValidatePayload>) {
  const session = await deps.store.sessions.getRequired(p.sessionId);
  try {
    const request = await validated(deps, session, p.requestId);
    await audit(deps, 'requested', request, request.requester, {
      requestId: p.requestId,
      timeLimitMinutes: request.timeLimitMinutes,
    });
    return { valid: true, approver: request.seniorApprover };
  } catch (error) {
    if (!(error instanceof BreakGlassValidationError)) throw error;
    const detail = Object.values(error.fieldErrors).flat().join(' ');
    await audit(deps, 'rejected', { sessionId: p.sessionId }, 'calmops', {
      requestId: p.requestId,
      fieldErrors: error.fieldErrors,
    });
    await deps.store.approvals.cancel(p.requestId, deps.now()).catch(() => false);
    await postToSession(deps, session, breakGlassOutcomeView(p.sessionId, 'refused', detail));
    return { valid: false, approver: null };
  }
}

export async function breakGlassWarn(deps: WorkflowDeps, p: z.infer<typeof WarnPayload>) {
  const session = await deps.store.sessions.getRequired(p.sessionId);
  const request = await validated(deps, session, p.requestId);
  await postToSession(deps, session, breakGlassWarningView(facts(request, p.requestId)));
  await recordEvent(deps, p.sessionId, 'break-glass.warned', {
    summary: `Red warning posted for ${p.requestId}`,
    data: { requestId: p.requestId, auditLevel: 'enhanced' },
  });
  return {};
}

export async function breakGlassExpired(deps: WorkflowDeps, p: z.infer<typeof ExpiredPayload>) {
  const session = await deps.store.sessions.getRequired(p.sessionId);
  await expireApproval(deps, session, 'break-glass', p.requestId);
  await audit(deps, 'denied', { sessionId: p.sessionId }, 'calmops', {
    requestId: p.requestId,
    reason: 'no decision before the approval timed out',
  });
  await postToSession(
    deps,
    session,
    breakGlassOutcomeView(
      p.sessionId,
      'expired',
      'The senior approver did not decide in time; no override was granted.',
    ),
  );
  return {};
}

export async function breakGlassDenied(deps: WorkflowDeps, p: z.infer<typeof DeniedPayload>) {
  const session = await deps.store.sessions.getRequired(p.sessionId);
  await audit(deps, 'denied', { sessionId: p.sessionId }, p.decision.userId ?? 'unknown', {
    requestId: p.requestId,
    note: p.decision.note ?? null,
  });
  await postToSession(
    deps,
    session,
    p.decision.userId
      ? breakGlassOutcomeView(
          p.sessionId,
          'denied',
          'denied the override. The workflow stays as it is.',
          p.decision.userId,
        )
      : breakGlassOutcomeView(p.sessionId, 'denied', 'The approver denied the override. The workflow stays as it is.'),
  );
  return {};
}

export async function breakGlassGrant(deps: WorkflowDeps, p: z.infer<typeof GrantPayload>) {
  const session = await deps.store.sessions.getRequired(p.sessionId);
  const request = await validated(deps, session, p.requestId);
  if (!p.decision.userId) throw new StepInputError('A break-glass approval must say who approved it');
  const override = grantOverride(request, { id: p.requestId, approvedBy: p.decision.userId, now: deps.now() });
  await deps.artifacts.mutateWorkflow(p.sessionId, deps.now(), (w) => ({ ...w, override }));
  await deps.store.sessions.mutate(
    p.sessionId,
    () => ({
      override: {
        state: override.skipToState,
        expiresAt: override.expiresAt,
        approver: override.approver,
        grantedAt: override.grantedAt,
        justification: override.justification.slice(0, SUMMARY_MAX),
      },
    }),
    { now: deps.now },
  );
  await audit(deps, 'granted', override, p.decision.userId, { requestId: p.requestId });
  await postToSession(
    deps,
    session,
    breakGlassGrantedView({
      ...facts(request, p.requestId),
      expiresAt: override.expiresAt,
      approvedBy: override.approver,
    }),
  );
  return { timeLimitSeconds: override.timeLimitMinutes * 60, expiresAt: override.expiresAt };
}

/**
 * Ends the override. Two parties may call it (the break-glass run at its deadline and the reconciler for a run that
 * was lost); the first one revokes, audits and tells the thread, and any later call changes nothing.
 */
export async function breakGlassRevoke(deps: WorkflowDeps, p: z.infer<typeof RevokePayload>) {
  const now = deps.now();
  let revoked: Override | undefined;
  let already = false;
  await deps.artifacts.mutateWorkflow(p.sessionId, now, (w) => {
    already = false;
    if (!w.override || w.override.id !== p.requestId) return w;
    already = w.override.revokedAt !== undefined;
    revoked = { ...w.override, revokedAt: w.override.revokedAt ?? now.toISOString() };
    return already ? w : { ...w, override: revoked };
  });
  if (already) {
    await deps.store.sessions.mutate(
      p.sessionId,
      (s) => (s.override && revoked && s.override.grantedAt === revoked.grantedAt ? { override: null } : {}),
      { now: deps.now },
    );
    return {};
  }
  const session = await deps.store.sessions.mutate(
    p.sessionId,
    (s) => (s.override && revoked && s.override.grantedAt === revoked.grantedAt ? { override: null } : {}),
    { now: deps.now },
  );
  await audit(deps, 'revoked', revoked ?? { sessionId: p.sessionId }, 'calmops', {
    requestId: p.requestId,
    automatic: true,
  });
  await postToSession(deps, session, breakGlassRevokedView(p.sessionId, p.requestId));
  return {};
}
