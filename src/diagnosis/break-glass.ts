import * as z from 'zod';
import { NOTE_MAX, NoteText } from '../limits.js';
import { classifyCommandLine } from './commands/index.js';
import { DIAGNOSTIC_STATES, type DiagnosticState, DiagnosticStateSchema, stateIndex } from './state-machine.js';

/**
 * Break-glass: an emergency override of the diagnostic workflow (ADR-005). A named senior approver who is not the
 * requester lets a session skip ahead to a state for at most an hour; every step is audited at the enhanced level
 * and a postmortem review falls due. The approval flow itself (buttons, waiting) lives elsewhere; these are the
 * rules it applies.
 */

export const BREAK_GLASS_LIMITS = {
  minJustificationLength: 20,
  minTimeLimitMinutes: 1,
  maxTimeLimitMinutes: 60,
  /** A postmortem review of every override falls due this many days after it was granted. */
  reviewDueDays: 5,
} as const;

const BREAK_GLASS_FIELDS = [
  'sessionId',
  'requester',
  'justification',
  'seniorApprover',
  'timeLimitMinutes',
  'skipToState',
  'change',
] as const;
type BreakGlassField = (typeof BREAK_GLASS_FIELDS)[number];
export type BreakGlassFieldErrors = Partial<Record<BreakGlassField, string[]>>;

export class BreakGlassValidationError extends Error {
  override readonly name = 'BreakGlassValidationError';
  constructor(
    readonly fieldErrors: BreakGlassFieldErrors,
    options?: { cause?: unknown },
  ) {
    const summary = Object.entries(fieldErrors)
      .map(([field, messages]) => `${field}: ${(messages ?? []).join('; ')}`)
      .join(' | ');
    super(`Break-glass request rejected: ${summary}`, options);
  }
}

export class BreakGlassApprovalError extends Error {
  override readonly name = 'BreakGlassApprovalError';
}

/** Form input as it arrives (modal values are strings); validation turns it into a ValidBreakGlassRequest. */
export interface BreakGlassRequestInput {
  sessionId?: unknown;
  requester?: unknown;
  justification?: unknown;
  seniorApprover?: unknown;
  timeLimitMinutes?: unknown;
  skipToState?: unknown;
  /** The change the override is for, as the command a person will run. */
  change?: unknown;
}

export interface ValidBreakGlassRequest {
  sessionId: string;
  requester: string;
  justification: string;
  seniorApprover: string;
  timeLimitMinutes: number;
  skipToState: DiagnosticState;
  previousState: DiagnosticState;
  /** The command the override unlocks; the override unlocks nothing else. */
  change?: string;
}

export interface BreakGlassContext {
  /** The session the request names, as loaded by the caller; undefined when it does not exist. */
  session: { id: string; state: DiagnosticState } | undefined | null;
  /** Who may approve. When given, the approver must be one of them. */
  seniorApprovers?: readonly string[];
}

/** `<@U123|alice>`, `<@U123>`, `@alice` and ` alice ` all name the same person. */
export function normalizeUser(value: string): string {
  const mention = value.trim().match(/^<@([A-Z0-9]+)(?:\|[^>]*)?>$/i);
  if (mention?.[1]) return mention[1];
  return value.trim().replace(/^@/, '');
}

/** Reasons a justification is not one; empty when it is acceptable. */
export function justificationProblems(text: string): string[] {
  const trimmed = text.trim().replace(/\s+/g, ' ');
  const problems: string[] = [];
  if (trimmed.length < BREAK_GLASS_LIMITS.minJustificationLength) {
    problems.push(
      `Explain the emergency in at least ${BREAK_GLASS_LIMITS.minJustificationLength} characters (got ${trimmed.length}).`,
    );
    return problems;
  }
  const compact = trimmed.replace(/\s/g, '').toLowerCase();
  const distinct = new Set(compact).size;
  if (distinct < 6 || /^(.{1,8}?)\1+.{0,8}$/.test(compact)) {
    problems.push('The justification repeats the same characters; describe the emergency and its impact.');
  }
  const words = trimmed.split(' ').filter((w) => /[a-z]{2,}/i.test(w));
  if (words.length < 3) problems.push('Use at least three words: what is broken, who is affected, why it cannot wait.');
  return problems;
}

function parseMinutes(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && /^\s*\d+(?:\.\d+)?\s*$/.test(value)) return Number(value);
  return undefined;
}

/** Checks every field and reports all problems at once, per field, so a form can show them next to each input. */
export function validateBreakGlassRequest(
  input: BreakGlassRequestInput,
  context: BreakGlassContext,
): ValidBreakGlassRequest {
  const errors: BreakGlassFieldErrors = {};
  const add = (field: BreakGlassField, message: string) => {
    errors[field] = [...(errors[field] ?? []), message];
  };
  const text = (value: unknown) => (typeof value === 'string' ? value.trim() : '');

  const sessionId = text(input.sessionId);
  if (!sessionId) add('sessionId', 'A session id is required.');
  else if (!context.session || context.session.id !== sessionId) add('sessionId', `No session "${sessionId}" exists.`);

  const requester = normalizeUser(text(input.requester));
  if (!requester) add('requester', 'The requester is required.');

  const justification = typeof input.justification === 'string' ? input.justification.trim() : '';
  for (const problem of justificationProblems(justification)) add('justification', problem);

  const approver = normalizeUser(text(input.seniorApprover));
  if (!approver) add('seniorApprover', 'Name the senior engineer who approves this override.');
  else if (approver.toLowerCase() === requester.toLowerCase()) {
    add('seniorApprover', 'The approver must be someone other than the requester.');
  } else if (context.seniorApprovers && !context.seniorApprovers.map(normalizeUser).includes(approver)) {
    add('seniorApprover', `${approver} is not on the list of senior approvers.`);
  }

  const minutes = parseMinutes(input.timeLimitMinutes);
  const { minTimeLimitMinutes: min, maxTimeLimitMinutes: max } = BREAK_GLASS_LIMITS;
  if (minutes === undefined) add('timeLimitMinutes', `Give a time limit in whole minutes (${min}–${max}).`);
  else if (!Number.isInteger(minutes)) add('timeLimitMinutes', 'The time limit must be a whole number of minutes.');
  else if (minutes < min || minutes > max) {
    add('timeLimitMinutes', `The time limit must be between ${min} and ${max} minutes (got ${minutes}).`);
  }

  const target = DiagnosticStateSchema.safeParse(text(input.skipToState).toUpperCase());
  if (!target.success) {
    add('skipToState', `Choose a target state: ${DIAGNOSTIC_STATES.join(', ')}.`);
  } else if (context.session && stateIndex(target.data) <= stateIndex(context.session.state)) {
    add('skipToState', `The target state must be later than the current state (${context.session.state}).`);
  }

  const change = text(input.change);
  if (change.length > NOTE_MAX) add('change', `Name the change in at most ${NOTE_MAX} characters.`);
  else if (change !== '') {
    const parsed = classifyCommandLine(change);
    if (!parsed || (parsed.kind !== 'write' && parsed.kind !== 'dangerous')) {
      add(
        'change',
        'Name the change as the command you will run (for example `kubectl rollout restart deployment/web -n shop`); reads need no override.',
      );
    }
  }

  if (Object.keys(errors).length > 0) throw new BreakGlassValidationError(errors);
  return {
    sessionId,
    requester,
    justification,
    seniorApprover: approver,
    timeLimitMinutes: minutes as number,
    skipToState: target.data as DiagnosticState,
    previousState: (context.session as { state: DiagnosticState }).state,
    ...(change ? { change } : {}),
  };
}

export const OverrideSchema = z.object({
  id: z.string().min(1),
  sessionId: z.string().min(1),
  skipToState: DiagnosticStateSchema,
  previousState: DiagnosticStateSchema,
  requester: z.string(),
  approver: z.string(),
  justification: z.string(),
  timeLimitMinutes: z.number().int().min(1).max(60),
  grantedAt: z.iso.datetime({ offset: true }),
  expiresAt: z.iso.datetime({ offset: true }),
  reviewDueAt: z.iso.datetime({ offset: true }),
  revokedAt: z.iso.datetime({ offset: true }).optional(),
  /** The change the override was granted for; when set, the override unlocks that change and nothing else. */
  change: NoteText.optional(),
});
export type Override = z.infer<typeof OverrideSchema>;

/** The override, once the named approver has approved. Anyone else approving is refused. */
export function grantOverride(
  request: ValidBreakGlassRequest,
  decision: { id: string; approvedBy: string; now: Date },
): Override {
  const approvedBy = normalizeUser(decision.approvedBy);
  if (approvedBy !== request.seniorApprover) {
    throw new BreakGlassApprovalError(
      `Only ${request.seniorApprover} may approve this override (approval came from ${approvedBy || 'nobody'}).`,
    );
  }
  const granted = decision.now.getTime();
  return {
    id: decision.id,
    sessionId: request.sessionId,
    skipToState: request.skipToState,
    previousState: request.previousState,
    requester: request.requester,
    approver: approvedBy,
    justification: request.justification,
    timeLimitMinutes: request.timeLimitMinutes,
    grantedAt: new Date(granted).toISOString(),
    expiresAt: new Date(granted + request.timeLimitMinutes * 60_000).toISOString(),
    reviewDueAt: new Date(granted + BREAK_GLASS_LIMITS.reviewDueDays * 86_400_000).toISOString(),
    ...(request.change ? { change: request.change } : {}),
  };
}

/** Active from the grant until expiry (exclusive) unless revoked. */
export function isOverrideActive(override: Override | null | undefined, now: Date): override is Override {
  if (!override || override.revokedAt) return false;
  const t = now.getTime();
  return t >= Date.parse(override.grantedAt) && t < Date.parse(override.expiresAt);
}

/** The state the gate should judge by: the override's target while it is active, the session's own otherwise. */
export function effectiveState(
  state: DiagnosticState,
  override: Override | null | undefined,
  now: Date,
): DiagnosticState {
  return isOverrideActive(override, now) && stateIndex(override.skipToState) > stateIndex(state)
    ? override.skipToState
    : state;
}

const BREAK_GLASS_AUDIT_EVENTS = [
  'requested',
  'rejected',
  'granted',
  'denied',
  'request-under-override',
  'expired',
  'revoked',
  'review-completed',
] as const;
export type BreakGlassAuditEvent = (typeof BREAK_GLASS_AUDIT_EVENTS)[number];

export interface BreakGlassAuditEntry {
  type: 'break-glass';
  auditLevel: 'enhanced';
  event: BreakGlassAuditEvent;
  at: string;
  sessionId: string;
  overrideId?: string;
  actor: string;
  requester?: string;
  approver?: string;
  justification?: string;
  skipToState?: DiagnosticState;
  previousState?: DiagnosticState;
  expiresAt?: string;
  reviewDueAt?: string;
  /** The change the override is for. */
  change?: string;
  /** Event-specific detail: field errors of a rejected request, the request made under the override, … */
  details: Record<string, unknown>;
}

/** One enhanced audit entry. Everything needed to reconstruct the emergency is in the entry itself. */
export function breakGlassAudit(
  event: BreakGlassAuditEvent,
  subject: Override | ValidBreakGlassRequest | { sessionId: string; requester?: string },
  context: { at: Date; actor: string; details?: Record<string, unknown> },
): BreakGlassAuditEntry {
  const override = 'grantedAt' in subject ? subject : undefined;
  const request = 'justification' in subject ? subject : undefined;
  return {
    type: 'break-glass',
    auditLevel: 'enhanced',
    event,
    at: context.at.toISOString(),
    sessionId: subject.sessionId,
    overrideId: override?.id,
    actor: context.actor,
    requester: subject.requester,
    approver: override?.approver ?? (request && 'seniorApprover' in request ? request.seniorApprover : undefined),
    justification: request?.justification,
    skipToState: request?.skipToState,
    previousState: request?.previousState,
    expiresAt: override?.expiresAt,
    reviewDueAt: override?.reviewDueAt,
    ...('change' in subject && subject.change ? { change: subject.change } : {}),
    details: context.details ?? {},
  };
}

/**
 * Automatic expiry: once the time limit passes, the override stops counting (isOverrideActive) and the caller
 * records this entry exactly once, then clears the override from the session.
 */
export function overrideExpiry(override: Override | null | undefined, now: Date): BreakGlassAuditEntry | undefined {
  if (!override || override.revokedAt) return undefined;
  if (now.getTime() < Date.parse(override.expiresAt)) return undefined;
  return breakGlassAudit('expired', override, {
    at: new Date(override.expiresAt),
    actor: 'calmops',
    details: { timeLimitMinutes: override.timeLimitMinutes, noticedAt: now.toISOString() },
  });
}
