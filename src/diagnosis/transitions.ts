import { resourceKey } from './blackboard.js';
import { currentEvidence, type EvidenceItem, latest, mergeEvidence, type WorkflowSnapshot } from './evidence.js';
import { countEvidence, type EvidenceGapItem, missingEvidence } from './evidence-requirements.js';
import {
  describeTarget,
  isStillPresent,
  type ValidationContext,
  type ValidationTarget,
  validationTargetsOf,
} from './fix-validation.js';
import {
  canTransition,
  type DiagnosticState,
  type EvidenceType,
  evidenceLabel,
  STATE_MACHINE,
  stateIndex,
  type TransitionCause,
  type TransitionRules,
} from './state-machine.js';

/**
 * The one place that decides how a session moves through ADR-005's states. Everything that can move a session goes
 * through `advance` (evidence recorded by the workflow, a hypothesis chosen with a button or typed, a confirmation,
 * an approved plan, a fix report), so a button can skip no more than a sentence can: a forward move needs the
 * state's exit requirements and its minimum time, and every hop is recorded with its reason. Pure; time is the
 * caller's clock and the recorded state-entry time, never a wait.
 */

/** No minimum time anywhere: what the pure rules assume unless a deployment configures one. */
const NO_MINIMUMS: TransitionRules = { minTimeInStateSeconds: {} };

export type TransitionResult =
  | {
      kind: 'transition';
      from: DiagnosticState;
      to: DiagnosticState;
      cause: TransitionCause;
      reason: string;
      /** Set when the transition starts validating a fix: store it on the session. */
      validation?: ValidationContext;
      /** Set when the transition starts a new reasoning cycle: store it on the session. */
      cycleStartedAt?: string;
      /** Set when a fresh triage still shows the fault: the fix did not work. */
      fixValidation?: 'failed';
    }
  | { kind: 'validated'; from: DiagnosticState; reason: string }
  /**
   * The fault is not seen, but the fresh triage read too little to say it is gone: the session stays in GATHERING
   * and the fix is judged again by the next triage after `validation.startedAt`.
   */
  | { kind: 'validation-incomplete'; from: DiagnosticState; reason: string; validation: ValidationContext };

/**
 * What a fix must remove: the root cause confirmed in this reasoning cycle; else the session's latest confirmed
 * root cause (a failed validation starts a new cycle, and the next fix still answers to that cause); else the
 * symptoms seen so far.
 */
function validationTargets(current: readonly EvidenceItem[], all: readonly EvidenceItem[]): ValidationTarget[] {
  const confirmed = current.filter((e) => e.type === 'confirmed_root_cause' && e.code);
  const earlier = latest(
    all.filter((e) => e.code),
    'confirmed_root_cause',
  );
  const chosen =
    confirmed.length > 0 ? confirmed : earlier ? [earlier] : current.filter((e) => e.type === 'symptoms' && e.code);
  const targets = new Map<string, ValidationTarget>();
  for (const e of chosen) {
    const target: ValidationTarget = { code: e.code as string, ...(e.resource ? { resource: e.resource } : {}) };
    targets.set(`${target.code}|${target.resource ? resourceKey(target.resource) : ''}`, target);
  }
  return [...targets.values()];
}

/** The outcome of a fix validation a step stands for, if it is one: what the first-time-fix metric counts. */
export function validationOutcome(step: TransitionResult): { passed: boolean; reason: string } | undefined {
  if (step.kind === 'validated') return { passed: true, reason: step.reason };
  if (step.kind === 'validation-incomplete') return { passed: false, reason: step.reason };
  if (step.fixValidation === 'failed') return { passed: false, reason: step.reason };
  return undefined;
}

const percent = (value: number) => `${Math.round(value * 100)}%`;

function summarizeMet(state: DiagnosticState, evidence: readonly EvidenceItem[]): string {
  return STATE_MACHINE[state].exitRequirements
    .map((r) => `${countEvidence(evidence, r)} ${evidenceLabel(r.type)}`)
    .join(', ');
}

/**
 * The next step the evidence allows, or null. Order matters: a validation in progress judges the fix first (nothing
 * else moves the session meanwhile), then a fix report (validate it, from whatever state it was reported in), then a
 * new hypothesis during TESTING (back to HYPOTHESIZING), then the forward move.
 */
export function evaluateTransition(
  session: WorkflowSnapshot,
  at?: string,
  rules: TransitionRules = NO_MINIMUMS,
): TransitionResult | null {
  const { state, stateEnteredAt } = session;
  const evidence = currentEvidence(session);
  const since = (type: EvidenceType) => evidence.filter((e) => e.type === type && e.at > stateEnteredAt);

  if (session.validation && state === 'GATHERING') {
    const { startedAt } = session.validation;
    const targets = validationTargetsOf(session.validation);
    const fresh = evidence.filter((e) => e.source === 'envelope' && e.at > startedAt);
    let triage: EvidenceItem | undefined;
    for (const e of fresh) if (e.id.startsWith('triage:') && (!triage || e.at >= triage.at)) triage = e;
    if (!triage) return null;
    const persisting = fresh.filter((e) => e.type === 'symptoms' && isStillPresent(targets, e));
    if (persisting.length > 0) {
      return {
        kind: 'transition',
        from: state,
        to: 'ANALYZING',
        cause: 'validation',
        reason: `Validation failed: ${persisting.map((e) => e.description).join('; ')} still present after the fix`,
        cycleStartedAt: [startedAt, ...persisting.map((e) => e.at)].sort().at(-1),
        fixValidation: 'failed',
      };
    }
    const gone = targets.length > 0 ? targets.map(describeTarget).join(', ') : 'the original symptoms';
    const complete = triage.completeness;
    if (complete && complete.value < complete.threshold) {
      return {
        kind: 'validation-incomplete',
        from: state,
        reason: `Not validated: evidence incomplete (the fresh triage read ${percent(complete.value)} of what it needs, threshold ${percent(complete.threshold)}), so the absence of ${gone} proves nothing yet`,
        validation: { ...session.validation, startedAt: triage.at },
      };
    }
    return { kind: 'validated', from: state, reason: `Validation passed: a fresh triage no longer shows ${gone}` };
  }

  const fix = since('fix_applied')[0];
  if (fix && (state === 'GATHERING' || canTransition(state, 'GATHERING', 'validation'))) {
    const early = state !== 'RESOLVING' ? ' before a confirmed, planned fix' : '';
    const targets = validationTargets(evidence, session.evidence);
    return {
      kind: 'transition',
      from: state,
      to: 'GATHERING',
      cause: 'validation',
      reason: `${fix.description}${early}; validating the fix with a fresh triage`,
      validation: { startedAt: fix.at, codes: [...new Set(targets.map((t) => t.code))], targets },
    };
  }

  if (state === 'TESTING') {
    const hypothesis = since('hypothesis').at(-1);
    if (hypothesis) {
      return {
        kind: 'transition',
        from: state,
        to: 'HYPOTHESIZING',
        cause: 'evidence',
        reason: `New hypothesis replaces the one under test: ${hypothesis.description}`,
      };
    }
  }

  const forward = STATE_MACHINE[state].nextStates[0];
  if (!forward || state === 'RESOLVING') return null;
  if (missingEvidence(state, evidence).length > 0) return null;
  if (timeLeft(session, at, rules) > 0) return null;
  return {
    kind: 'transition',
    from: state,
    to: forward,
    cause: 'evidence',
    reason: `${state} → ${forward}: requirements met (${summarizeMet(state, evidence)})`,
  };
}

/** Applies evaluateTransition until nothing moves: one envelope may carry a session through several states. */
export function advance(
  session: WorkflowSnapshot,
  at: string,
  rules: TransitionRules = NO_MINIMUMS,
): { snapshot: WorkflowSnapshot; steps: TransitionResult[] } {
  let snapshot = { ...session };
  const steps: TransitionResult[] = [];
  for (let i = 0; i < 8; i++) {
    const step = evaluateTransition(snapshot, at, rules);
    if (!step) break;
    steps.push(step);
    if (step.kind === 'validated') {
      snapshot = { ...snapshot, validation: null };
      break;
    }
    if (step.kind === 'validation-incomplete') {
      snapshot = { ...snapshot, validation: step.validation };
      break;
    }
    snapshot = {
      ...snapshot,
      state: step.to,
      stateEnteredAt: at,
      validation: step.validation ?? (step.cause === 'validation' ? null : snapshot.validation),
      cycleStartedAt: step.cycleStartedAt ?? snapshot.cycleStartedAt,
    };
    // Entering with `at` equal to the triggering evidence keeps `since(...)` from firing twice on the same item.
  }
  return { snapshot, steps };
}

/** Seconds the session must still stay in its state before the evidence may move it forward (0 when it may). */
export function timeLeft(
  session: Pick<WorkflowSnapshot, 'state' | 'stateEnteredAt'>,
  at: string | undefined,
  rules: TransitionRules,
): number {
  const minimum = rules.minTimeInStateSeconds[session.state] ?? 0;
  if (minimum <= 0 || at === undefined) return 0;
  const stayed = (Date.parse(at) - Date.parse(session.stateEnteredAt)) / 1000;
  return Number.isFinite(stayed) ? Math.max(0, Math.ceil(minimum - stayed)) : 0;
}

/** Why a session does not move forward: what its state still needs, and how long it must still stay. */
export interface Hold {
  state: DiagnosticState;
  missing: EvidenceGapItem[];
  /** Seconds of the state's minimum time still to go, and that minimum. */
  wait: number;
  minimum: number;
}

function holdOf(session: WorkflowSnapshot, at: string, rules: TransitionRules = NO_MINIMUMS): Hold {
  return {
    state: session.state,
    missing: missingEvidence(session.state, currentEvidence(session)),
    wait: timeLeft(session, at, rules),
    minimum: rules.minTimeInStateSeconds[session.state] ?? 0,
  };
}

export type WalkResult =
  | { reached: true; snapshot: WorkflowSnapshot; steps: TransitionResult[] }
  | { reached: false; snapshot: WorkflowSnapshot; steps: TransitionResult[]; hold: Hold };

/**
 * What recording `incoming` would do, and whether it brings the session to `target`. A person who asks for a later
 * state (a hypothesis to test, from GATHERING) walks every state in between, each on its own requirements, or is
 * told where the walk stops and why; no state is skipped.
 */
export function walkTo(
  session: WorkflowSnapshot,
  incoming: readonly EvidenceItem[],
  target: DiagnosticState,
  at: string,
  rules: TransitionRules = NO_MINIMUMS,
): WalkResult {
  const { snapshot, steps } = advance({ ...session, evidence: mergeEvidence(session.evidence, incoming) }, at, rules);
  const reached =
    snapshot.state === target ||
    steps.some((s) => s.kind === 'transition' && s.to === target && stateIndex(snapshot.state) >= stateIndex(target));
  return reached
    ? { reached: true, snapshot, steps }
    : { reached: false, snapshot, steps, hold: holdOf(snapshot, at, rules) };
}

const HINTS: Readonly<Partial<Record<EvidenceType, string>>> = {
  symptoms: 'a read of the affected objects adds the events or logs that count',
  affected_resources: 'a read of a named object, e.g. `kubectl describe pod <name>`',
  logs: 'say “show me the logs”',
  events: 'say “show me the events”',
  similar_incidents: 'ask “have we seen this before?”',
  pattern_analysis: 'a triage that ranks causes; there is nothing ranked yet',
  hypothesis: 'pick a hypothesis (a Test button, or “hypothesis 1”)',
  test_plan: 'pick a hypothesis (a Test button, or “hypothesis 1”)',
  hypothesis_test_results: 'run a read that tests the hypothesis',
  confirmed_root_cause: 'reply `confirmed` once a test shows it',
  solution_plan: 'a reviewer approves the remediation plan (reply `confirmed` to draft one)',
  rollback_plan: 'a reviewer approves the remediation plan (reply `confirmed` to draft one)',
  fix_applied: 'reply `resolved` once the fix is applied',
};

/** How a person gets a kind of evidence in this thread. */
function evidenceHint(type: EvidenceType): string | undefined {
  return HINTS[type];
}

/** A hold in words: what the state still needs and how long it must still last. */
export function describeHold(hold: Hold, hints: (type: EvidenceType) => string | undefined = evidenceHint): string {
  const parts: string[] = [];
  if (hold.missing.length > 0) {
    parts.push(
      `${hold.state} still needs ${hold.missing
        .map((g) => {
          const hint = hints(g.type);
          const alternative = g.orKinds && g.minCount > 1 ? `, or one seen in ${g.minCount} kinds of evidence` : '';
          return `${evidenceLabel(g.type)} (${g.have}/${g.minCount}${alternative})${hint ? ` — ${hint}` : ''}`;
        })
        .join('; ')}`,
    );
  }
  if (hold.wait > 0) {
    parts.push(
      `${hold.state} lasts at least ${hold.minimum} s before the evidence may move it on (${hold.wait} s to go)`,
    );
  }
  return parts.join('. ');
}
