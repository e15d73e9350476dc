import { describe, expect, it } from 'vitest';
import {
  BreakGlassApprovalError,
  type BreakGlassRequestInput,
  BreakGlassValidationError,
  breakGlassAudit,
  effectiveState,
  grantOverride,
  isOverrideActive,
  justificationProblems,
  overrideExpiry,
  validateBreakGlassRequest,
} from '../../../src/diagnosis/break-glass.js';
import { when } from '../../support/diagnosis-fixtures.js';

const valid: BreakGlassRequestInput = {
  sessionId: 's1',
  requester: '<@U111|alice>',
  seniorApprover: '<@U222|bob>',
  justification: 'Checkout is down for all EU customers; revenue impact every minute',
  timeLimitMinutes: '30',
  skipToState: 'resolving',
};
const ctx = { session: { id: 's1', state: 'ANALYZING' as const } };

function errorsOf(input: BreakGlassRequestInput, context: Parameters<typeof validateBreakGlassRequest>[1] = ctx) {
  try {
    validateBreakGlassRequest(input, context);
  } catch (error) {
    expect(error).toBeInstanceOf(BreakGlassValidationError);
    return (error as BreakGlassValidationError).fieldErrors;
  }
  throw new Error('expected a validation error');
}

describe('break-glass validation', () => {
  it('accepts a complete request and normalises Slack mentions and modal strings', () => {
    expect(validateBreakGlassRequest(valid, ctx)).toEqual({
      sessionId: 's1',
      requester: 'U111',
      seniorApprover: 'U222',
      justification: valid.justification,
      timeLimitMinutes: 30,
      skipToState: 'RESOLVING',
      previousState: 'ANALYZING',
    });
  });

  it('rejects an unknown session', () => {
    expect(errorsOf(valid, { session: undefined }).sessionId?.[0]).toMatch(/No session "s1"/);
  });

  it.each([
    ['too short', 'prod down', /at least 20 characters/],
    ['padded with spaces', '   prod is down        ', /at least 20 characters/],
    ['one repeated character', 'aaaaaaaaaaaaaaaaaaaaaaaaa', /repeats/],
    ['a repeated word', 'urgent urgent urgent urgent', /repeats/],
    ['keyboard mash', 'asdfasdfasdfasdfasdfasdf', /repeats/],
    ['one long word', 'emergencyemergencyfixnowplease', /three words/],
  ])('rejects a justification that is %s', (_label, justification, message) => {
    expect(errorsOf({ ...valid, justification }).justification?.join(' ')).toMatch(message);
  });

  it('needs a senior approver who is not the requester, and on the list when one is given', () => {
    expect(errorsOf({ ...valid, seniorApprover: '' }).seniorApprover?.[0]).toMatch(/Name the senior engineer/);
    expect(errorsOf({ ...valid, seniorApprover: '<@U111>' }).seniorApprover?.[0]).toMatch(/someone other than/);
    expect(errorsOf(valid, { ...ctx, seniorApprovers: ['U333'] }).seniorApprover?.[0]).toMatch(/not on the list/);
    expect(() => validateBreakGlassRequest(valid, { ...ctx, seniorApprovers: ['<@U222>'] })).not.toThrow();
  });

  it.each([
    [0, /between 1 and 60/],
    [61, /between 1 and 60/],
    [7.5, /whole number/],
    ['soon', /whole minutes/],
    [undefined, /whole minutes/],
  ])('rejects a time limit of %s', (timeLimitMinutes, message) => {
    expect(errorsOf({ ...valid, timeLimitMinutes }).timeLimitMinutes?.[0]).toMatch(message);
  });

  it('needs a valid target state later than the current one', () => {
    expect(errorsOf({ ...valid, skipToState: 'FIXING' }).skipToState?.[0]).toMatch(/Choose a target state/);
    expect(errorsOf({ ...valid, skipToState: 'GATHERING' }).skipToState?.[0]).toMatch(/later than the current state/);
  });

  it('reports every field at once', () => {
    const errors = errorsOf({
      sessionId: '',
      requester: 'U1',
      seniorApprover: 'U1',
      justification: 'x',
      timeLimitMinutes: 90,
    });
    expect(Object.keys(errors).sort()).toEqual([
      'justification',
      'seniorApprover',
      'sessionId',
      'skipToState',
      'timeLimitMinutes',
    ]);
    expect(new BreakGlassValidationError(errors).message).toMatch(/^Break-glass request rejected: /);
  });

  it('accepts a sensible justification', () => {
    expect(justificationProblems('Payments API returns 503 to all customers, on-call lead approved')).toEqual([]);
  });
});

describe('break-glass override', () => {
  const request = validateBreakGlassRequest(valid, ctx);

  it('is granted only by the named approver', () => {
    expect(() => grantOverride(request, { id: 'o1', approvedBy: 'U999', now: when(0) })).toThrow(
      BreakGlassApprovalError,
    );
  });

  it('skips to the target state until it expires, then records its expiry', () => {
    const override = grantOverride(request, { id: 'o1', approvedBy: '<@U222>', now: when(0) });
    expect(override.expiresAt).toBe(when(30 * 60).toISOString());
    expect(override.reviewDueAt).toBe(when(5 * 86_400).toISOString());
    expect(isOverrideActive(override, when(60))).toBe(true);
    expect(effectiveState('ANALYZING', override, when(60))).toBe('RESOLVING');
    expect(isOverrideActive(override, when(30 * 60))).toBe(false);
    expect(effectiveState('ANALYZING', override, when(30 * 60))).toBe('ANALYZING');
    expect(overrideExpiry(override, when(29 * 60))).toBeUndefined();
    const expiry = overrideExpiry(override, when(45 * 60));
    expect(expiry).toMatchObject({
      type: 'break-glass',
      auditLevel: 'enhanced',
      event: 'expired',
      overrideId: 'o1',
      at: override.expiresAt,
      actor: 'calmops',
    });
    expect(isOverrideActive({ ...override, revokedAt: when(10).toISOString() }, when(60))).toBe(false);
  });

  it('writes enhanced audit entries with everything needed to review the emergency', () => {
    const override = grantOverride(request, { id: 'o1', approvedBy: 'U222', now: when(0) });
    const granted = breakGlassAudit('granted', override, { at: when(0), actor: 'U222' });
    expect(granted).toMatchObject({
      type: 'break-glass',
      auditLevel: 'enhanced',
      event: 'granted',
      sessionId: 's1',
      overrideId: 'o1',
      requester: 'U111',
      approver: 'U222',
      justification: valid.justification,
      skipToState: 'RESOLVING',
      previousState: 'ANALYZING',
      expiresAt: override.expiresAt,
      reviewDueAt: override.reviewDueAt,
    });
    const used = breakGlassAudit('request-under-override', override, {
      at: when(60),
      actor: 'U111',
      details: { request: 'kubectl rollout restart deploy/api' },
    });
    expect(used.details).toEqual({ request: 'kubectl rollout restart deploy/api' });
    const rejected = breakGlassAudit(
      'rejected',
      { sessionId: 's1', requester: 'U111' },
      {
        at: when(0),
        actor: 'U111',
        details: { fieldErrors: { justification: ['too short'] } },
      },
    );
    expect(rejected.overrideId).toBeUndefined();
  });
});
