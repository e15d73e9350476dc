import { effectiveState, isOverrideActive, type Override } from './break-glass.js';
import { currentEvidence, type EvidenceItem } from './evidence.js';
import { type EvidenceFigure, evidenceFigure, formatMissing, missingEvidence } from './evidence-requirements.js';
import {
  detectPanicSignals,
  type Intervention,
  intervene,
  type PanicSignal,
  type RecordedRequest,
  type RequestGuidance,
} from './panic.js';
import type { UserRequest } from './request.js';
import {
  type DiagnosticState,
  firstStateAllowing,
  isToolClassAllowed,
  STATE_MACHINE,
  type ToolClass,
} from './state-machine.js';

/**
 * The gate: one decision per request from the thread, from the session's state, evidence, override, recent
 * requests and panic history. Pure; the caller records the decision and the signals, runs allowed reads with the
 * read-only identity, and answers allowed changes from the approved plan (calmops never runs them).
 */

export interface GateSession {
  state: DiagnosticState;
  evidence: readonly EvidenceItem[];
  override?: Override | null;
  recentRequests: readonly RecordedRequest[];
  panicHistory: readonly PanicSignal[];
  cycleStartedAt?: string | null;
  /** What calmops proposed that this request follows (a suggested read, the plan's next step). */
  guidance?: RequestGuidance;
}

const GATE_CODES = [
  'READ_ALLOWED',
  'READ_REFUSED_SECRETS',
  'READ_MALFORMED',
  'INSPECT_ALLOWED',
  'CHANGE_ALLOWED',
  'CHANGE_OUT_OF_PLAN',
  'BLOCKED_BY_STATE',
  'BLOCKED_BY_PANIC',
  'HYPOTHESIS_RECORDED',
  'HYPOTHESIS_TOO_EARLY',
  'ROOT_CAUSE_CONFIRMED',
  'ROOT_CAUSE_TOO_EARLY',
  'FIX_REPORTED',
  'BREAK_GLASS_FORM',
  'HANDOFF_PROPOSED',
  'CHAT',
] as const;
type GateCode = (typeof GATE_CODES)[number];

/** What the caller does next with an allowed request. */
type GateNext =
  | 'run-read'
  | 'human-runs'
  | 'answer-from-plan'
  | 'record-evidence'
  | 'open-break-glass'
  | 'propose-handoff'
  | 'reply'
  | 'none';

export interface GateDecision {
  allowed: boolean;
  code: GateCode;
  reason: string;
  guidance: string;
  /** Set by a blocking panic intervention: move the session to this state and start a new reasoning cycle. */
  forcedState?: DiagnosticState;
  effectiveState: DiagnosticState;
  overrideActive: boolean;
  next: GateNext;
  /** Every signal raised by this request, blocking or not: record them all. */
  signals: PanicSignal[];
  intervention?: Intervention;
  /** A caution shown with an allowed request (low/medium signals). */
  warning?: string;
  /** The session's evidence figure, the one the envelope and `/triage status` show. */
  evidence?: EvidenceFigure;
}

function stateGuidance(state: DiagnosticState, evidence: readonly EvidenceItem[]): string {
  const gaps = missingEvidence(state, evidence);
  const still = gaps.length > 0 ? ` Still needed before moving on: ${formatMissing(gaps)}.` : '';
  return `${STATE_MACHINE[state].guidance}${still}`;
}

const CLASS_WORDS: Record<ToolClass, string> = {
  read: 'Reads',
  inspect: 'Live sessions (exec, rsh, debug, port-forward)',
  write: 'Changes',
  destructive: 'Destructive operations',
};

/** A request that would change the cluster (a live session into a container only looks). */
export function isChangeRequest(request: UserRequest): boolean {
  return request.kind === 'write' || (request.kind === 'dangerous' && request.toolClass !== 'inspect');
}

/**
 * The refusals made before panic signals are looked for: a request that is refused whatever happens never runs, so
 * it rushes nothing and is no panic signal.
 */
function refusedOutright(
  session: GateSession,
  request: UserRequest,
  state: GateDecision['effectiveState'],
  overrideActive: boolean,
): GateDecision | undefined {
  if (request.kind === 'read' && request.resource?.kind === 'secrets') {
    // Refused whatever the state: a read that never runs rushes nothing and jumps nowhere, so it is no panic signal.
    const figure = evidenceFigure(session.evidence);
    return {
      allowed: false,
      code: 'READ_REFUSED_SECRETS',
      reason: 'Secrets are never read by calmops',
      guidance:
        'calmops does not read Secrets. Check that the Secret exists with `kubectl get secret <name> -o name`, run by a person with access.',
      effectiveState: state,
      overrideActive,
      next: 'reply',
      signals: [],
      ...(figure ? { evidence: figure } : {}),
    };
  }
  if ((overrideActive || session.state === 'RESOLVING') && session.guidance?.outOfPlan && isChangeRequest(request)) {
    // RESOLVING's changes are the approved plan's steps, and an override's is the change it was granted for.
    // Anything else is refused and explained; being refused, it rushes nothing and is no panic signal, and the
    // approved plan stays in force.
    const figure = evidenceFigure(session.evidence);
    return {
      allowed: false,
      code: 'CHANGE_OUT_OF_PLAN',
      reason: overrideActive
        ? 'The change is not the one the override was granted for'
        : 'The change is not a step of the approved plan',
      guidance:
        "In RESOLVING calmops answers the approved plan's changes only. A different change needs a plan that includes it: reply `resolved` once the plan's fix is applied (a fix that does not hold sends the session back to ANALYZING for a new plan), or ask for break-glass naming the change.",
      effectiveState: state,
      overrideActive,
      next: 'reply',
      signals: [],
      ...(figure ? { evidence: figure } : {}),
    };
  }
  return undefined;
}

/** How one request is answered once its panic signals are known: allowed or blocked, with the same context. */
interface Answer {
  allow: (code: GateCode, next: GateNext, reason: string, guidance: string) => GateDecision;
  block: (code: GateCode, reason: string, guidance: string) => GateDecision;
  state: GateDecision['effectiveState'];
  evidence: ReturnType<typeof currentEvidence>;
  overrideActive: boolean;
}

/** A change or a live session: open from the state the transition rules name, and never run by calmops itself. */
function changeDecision(session: GateSession, request: UserRequest, answer: Answer): GateDecision {
  const { allow, block, state, evidence, overrideActive } = answer;
  const toolClass: ToolClass = request.toolClass ?? (request.kind === 'write' ? 'write' : 'destructive');
  if (!isToolClassAllowed(state, toolClass)) {
    const opens = firstStateAllowing(toolClass);
    return block(
      'BLOCKED_BY_STATE',
      `${CLASS_WORDS[toolClass]} are blocked in ${state}; they open in ${opens}`,
      `${CLASS_WORDS[toolClass]} are not available yet (we are in ${state}; they open in ${opens}). ${stateGuidance(state, evidence)}`,
    );
  }
  if (toolClass === 'inspect') {
    return allow(
      'INSPECT_ALLOWED',
      'human-runs',
      `Live sessions are allowed in ${state} to test the hypothesis`,
      'calmops does not open sessions into containers. Run it yourself and paste what you find; it will be recorded as a test result.',
    );
  }
  return allow(
    'CHANGE_ALLOWED',
    'answer-from-plan',
    overrideActive ? `Allowed under break-glass override ${session.override?.id}` : `Changes are allowed in ${state}`,
    'calmops never runs changes: the matching step of the approved plan, with its rollback, is what to run.',
  );
}

/** A root cause is confirmed only in TESTING or later, and only once a read has tested the hypothesis. */
function rootCauseDecision(answer: Answer): GateDecision {
  const { allow, block, state, evidence } = answer;
  const tested = evidence.some((e) => e.type === 'hypothesis_test_results');
  if (state !== 'TESTING' && state !== 'RESOLVING') {
    return block(
      'ROOT_CAUSE_TOO_EARLY',
      `A root cause is confirmed in TESTING, not ${state}`,
      `A root cause is confirmed after a hypothesis has been tested. ${stateGuidance(state, evidence)}`,
    );
  }
  if (!tested) {
    return block(
      'ROOT_CAUSE_TOO_EARLY',
      'The hypothesis has no test results yet',
      'Run at least one read that tests the hypothesis before confirming it.',
    );
  }
  return allow(
    'ROOT_CAUSE_CONFIRMED',
    'record-evidence',
    'Root cause confirmed after testing',
    STATE_MACHINE.TESTING.guidance,
  );
}

function decisionByKind(session: GateSession, request: UserRequest, answer: Answer): GateDecision {
  const { allow, block, state, evidence } = answer;
  switch (request.kind) {
    case 'read': {
      if (request.malformed) {
        return block(
          'READ_MALFORMED',
          'The command has unbalanced quotes',
          'Fix the quoting and send the command again.',
        );
      }
      return allow('READ_ALLOWED', 'run-read', `Reads are allowed in ${state}`, stateGuidance(state, evidence));
    }
    case 'write':
    case 'dangerous':
      return changeDecision(session, request, answer);
    case 'hypothesis': {
      // Whether the session may go on to test it is the transition rules' call (walkTo), the same for a button
      // and a sentence: the gate only says hypotheses are welcome.
      return allow(
        'HYPOTHESIS_RECORDED',
        'record-evidence',
        `Hypothesis recorded in ${state}`,
        STATE_MACHINE.HYPOTHESIZING.guidance,
      );
    }
    case 'confirm-root-cause':
      return rootCauseDecision(answer);
    case 'resolved':
      return allow(
        'FIX_REPORTED',
        'record-evidence',
        state === 'RESOLVING'
          ? 'Fix reported in RESOLVING'
          : `Fix reported in ${state}, before the workflow reached RESOLVING`,
        'Re-reading the cluster to validate the fix before the incident is closed.',
      );
    case 'break-glass':
      return allow(
        'BREAK_GLASS_FORM',
        'open-break-glass',
        'Break-glass requests go through the override form',
        'Fill in the break-glass form: a justification, a senior approver who is not you, and a time limit of at most 60 minutes.',
      );
    case 'handoff':
      return allow(
        'HANDOFF_PROPOSED',
        'propose-handoff',
        `Handoff to the ${request.handoffDomain ?? 'requested'} specialist`,
        'Confirm the handoff and the specialist will add its findings to the shared context.',
      );
    case 'chat':
      return allow('CHAT', 'none', 'Nothing to gate', stateGuidance(state, evidence));
  }
}

export function gateRequest(session: GateSession, request: UserRequest, now: Date): GateDecision {
  const overrideActive = isOverrideActive(session.override, now);
  const state = effectiveState(session.state, session.override, now);
  const evidence = currentEvidence(session);
  const refused = refusedOutright(session, request, state, overrideActive);
  if (refused !== undefined) return refused;
  const signals = detectPanicSignals(
    {
      state,
      evidence,
      recentRequests: session.recentRequests,
      panicHistory: session.panicHistory,
      overrideActive,
      now,
      ...(session.guidance ? { guidance: session.guidance } : {}),
    },
    request,
  );
  const intervention = intervene(signals);
  const figure = evidenceFigure(session.evidence);
  const base = {
    effectiveState: state,
    overrideActive,
    signals,
    intervention,
    ...(figure ? { evidence: figure } : {}),
  };

  if (intervention?.blocked) {
    return {
      ...base,
      allowed: false,
      code: 'BLOCKED_BY_PANIC',
      reason: signals.map((s) => `${s.type} (${s.severity}): ${s.description}`).join('; '),
      guidance: intervention.message,
      forcedState: intervention.forcedState,
      next: 'reply',
    };
  }
  const warning = intervention?.message;
  const allow = (code: GateCode, next: GateNext, reason: string, guidance: string): GateDecision => ({
    ...base,
    allowed: true,
    code,
    next,
    reason,
    guidance,
    warning,
  });
  const block = (code: GateCode, reason: string, guidance: string): GateDecision => ({
    ...base,
    allowed: false,
    code,
    next: 'reply',
    reason,
    guidance,
    warning,
  });

  return decisionByKind(session, request, { allow, block, state, evidence, overrideActive });
}
