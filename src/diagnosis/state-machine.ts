import * as z from 'zod';

/**
 * The diagnostic workflow of ADR-005 (docs/concepts.md). A session moves forward only when the evidence a state asks for is present;
 * RESOLVING hands back to GATHERING so that a fresh look at the cluster validates the fix.
 */
export const DIAGNOSTIC_STATES = ['GATHERING', 'ANALYZING', 'HYPOTHESIZING', 'TESTING', 'RESOLVING'] as const;
export const DiagnosticStateSchema = z.enum(DIAGNOSTIC_STATES);
export type DiagnosticState = z.infer<typeof DiagnosticStateSchema>;

const EVIDENCE_TYPES = [
  'symptoms',
  'affected_resources',
  'logs',
  'events',
  'observations',
  'similar_incidents',
  'pattern_analysis',
  'hypothesis',
  'test_plan',
  'hypothesis_test_results',
  'confirmed_root_cause',
  'solution_plan',
  'rollback_plan',
  'fix_applied',
] as const;
export const EvidenceTypeSchema = z.enum(EVIDENCE_TYPES);
export type EvidenceType = z.infer<typeof EvidenceTypeSchema>;

export interface EvidenceRequirement {
  type: EvidenceType;
  minCount: number;
  /** ADR-005's quality grade; shown to users so they know how thorough the evidence should be. */
  quality: 'basic' | 'detailed' | 'comprehensive';
  /** Count only evidence newer than the latest item of this type (test results belong to the current theory). */
  newerThan?: EvidenceType;
  /**
   * An incident with fewer findings than `minCount` cannot produce more symptoms however long anyone looks. When at
   * least one item is present, each distinct kind of evidence listed here that the session holds counts instead, so
   * one finding seen in its events and its logs meets "2 symptoms".
   */
  orKinds?: readonly EvidenceType[];
  /** Count only items from this source: a remediation plan counts once a reviewer approved it, not as a draft. */
  source?: 'plan';
}

/** The kinds of evidence that can stand in for symptoms an incident does not have. */
const SYMPTOM_KINDS: readonly EvidenceType[] = ['symptoms', 'events', 'logs', 'observations'];

/**
 * What a request is, for gating. `read` runs with calmops' read-only identity; `inspect` opens a live session in a
 * container or a tunnel (exec, rsh, debug, port-forward) that a human runs; `write` changes objects in a way a
 * rollback can undo; `destructive` deletes, drains, forces or cannot be undone cleanly.
 */
export const TOOL_CLASSES = ['read', 'inspect', 'write', 'destructive'] as const;
export type ToolClass = (typeof TOOL_CLASSES)[number];

export interface StateConfig {
  description: string;
  allowedToolClasses: readonly ToolClass[];
  blockedToolClasses: readonly ToolClass[];
  /**
   * Evidence the session must hold before it may leave this state forward. ADR-005's requirements table lists,
   * per state, what a session needs to be there; here each row moves to the state whose work produces it, so
   * GATHERING exits with symptoms and affected resources, ANALYZING with logs, events, a memory search and a
   * pattern analysis, and so on.
   */
  exitRequirements: readonly EvidenceRequirement[];
  /** Forward first, then the ADR's way back. */
  nextStates: readonly DiagnosticState[];
  /**
   * ADR-005's `minTimeInState`: how long the session stays before the evidence may move it on. The ADR's figure;
   * what a deployment enforces comes from `transitionRules` (configurable, small by default).
   */
  minTimeInStateSeconds?: number;
  guidance: string;
}

export const STATE_MACHINE: Readonly<Record<DiagnosticState, StateConfig>> = {
  GATHERING: {
    description: 'Collecting evidence and symptoms',
    allowedToolClasses: ['read'],
    blockedToolClasses: ['inspect', 'write', 'destructive'],
    exitRequirements: [
      { type: 'symptoms', minCount: 2, quality: 'detailed', orKinds: SYMPTOM_KINDS },
      { type: 'affected_resources', minCount: 1, quality: 'basic' },
    ],
    nextStates: ['ANALYZING'],
    minTimeInStateSeconds: 30,
    guidance: "Let's gather evidence about what's happening before making changes.",
  },
  ANALYZING: {
    description: 'Searching for similar patterns and root causes',
    allowedToolClasses: ['read'],
    blockedToolClasses: ['inspect', 'write', 'destructive'],
    exitRequirements: [
      { type: 'symptoms', minCount: 3, quality: 'detailed', orKinds: SYMPTOM_KINDS },
      { type: 'logs', minCount: 1, quality: 'basic' },
      { type: 'events', minCount: 1, quality: 'basic' },
      { type: 'similar_incidents', minCount: 1, quality: 'basic' },
      { type: 'pattern_analysis', minCount: 1, quality: 'detailed' },
    ],
    nextStates: ['HYPOTHESIZING', 'GATHERING'],
    guidance: "Based on the evidence, let's look for similar patterns we've seen before.",
  },
  HYPOTHESIZING: {
    description: 'Forming testable theories about root causes',
    allowedToolClasses: ['read'],
    blockedToolClasses: ['inspect', 'write', 'destructive'],
    exitRequirements: [
      { type: 'hypothesis', minCount: 1, quality: 'detailed' },
      { type: 'test_plan', minCount: 1, quality: 'comprehensive', newerThan: 'hypothesis' },
    ],
    nextStates: ['TESTING', 'ANALYZING'],
    guidance: "Let's form a specific theory about what's causing this issue.",
  },
  TESTING: {
    description: 'Testing hypotheses with targeted investigation',
    allowedToolClasses: ['read', 'inspect'],
    blockedToolClasses: ['write', 'destructive'],
    exitRequirements: [
      { type: 'hypothesis_test_results', minCount: 1, quality: 'detailed', newerThan: 'hypothesis' },
      { type: 'confirmed_root_cause', minCount: 1, quality: 'comprehensive', newerThan: 'hypothesis' },
      { type: 'solution_plan', minCount: 1, quality: 'comprehensive', source: 'plan' },
      { type: 'rollback_plan', minCount: 1, quality: 'detailed', source: 'plan' },
    ],
    nextStates: ['RESOLVING', 'HYPOTHESIZING'],
    guidance: "Let's test our theory with specific diagnostic commands.",
  },
  RESOLVING: {
    description: 'Applying the approved solution with its rollback plan',
    allowedToolClasses: ['read', 'inspect', 'write', 'destructive'],
    blockedToolClasses: [],
    exitRequirements: [{ type: 'fix_applied', minCount: 1, quality: 'basic' }],
    nextStates: ['GATHERING'],
    guidance: 'Now the fix can be applied by a human, from the approved plan and with its rollback ready.',
  },
};

/**
 * What a deployment enforces of the state machine's timing. `minTimeInStateSeconds` applies to every state the ADR
 * gives a minimum to; it is checked against the time the session entered the state, never waited for.
 */
export interface TransitionRules {
  minTimeInStateSeconds: Readonly<Partial<Record<DiagnosticState, number>>>;
}

/**
 * The ADR's 30 s in GATHERING assumes a person collecting evidence by hand; calmops' triage collects it in seconds,
 * so the default only keeps a session from being rushed out of GATHERING the moment its triage lands.
 */
export const DEFAULT_MIN_TIME_IN_STATE_SECONDS = 5;

export function transitionRules(minTimeInStateSeconds: number = DEFAULT_MIN_TIME_IN_STATE_SECONDS): TransitionRules {
  const minimums: Partial<Record<DiagnosticState, number>> = {};
  for (const state of DIAGNOSTIC_STATES) {
    if (STATE_MACHINE[state].minTimeInStateSeconds !== undefined) minimums[state] = Math.max(0, minTimeInStateSeconds);
  }
  return { minTimeInStateSeconds: minimums };
}

/** Why a state changes. Panic interventions may force ANALYZING from anywhere; everything else follows the table. */
export type TransitionCause = 'evidence' | 'panic-intervention' | 'break-glass' | 'validation';

export function stateIndex(state: DiagnosticState): number {
  return DIAGNOSTIC_STATES.indexOf(state);
}

export function canTransition(from: DiagnosticState, to: DiagnosticState, cause: TransitionCause): boolean {
  if (from === to) return false;
  if (cause === 'panic-intervention') return to === 'ANALYZING';
  // A reported fix is validated wherever it was reported: back to GATHERING for a fresh look at the cluster.
  if (cause === 'validation' && to === 'GATHERING') return true;
  // An approved override may skip forward past any number of states, never backwards.
  if (cause === 'break-glass') return stateIndex(to) > stateIndex(from);
  return STATE_MACHINE[from].nextStates.includes(to);
}

export function isToolClassAllowed(state: DiagnosticState, toolClass: ToolClass): boolean {
  return STATE_MACHINE[state].allowedToolClasses.includes(toolClass);
}

/** The first state (in workflow order) in which a tool class is allowed. */
export function firstStateAllowing(toolClass: ToolClass): DiagnosticState {
  return DIAGNOSTIC_STATES.find((s) => isToolClassAllowed(s, toolClass)) ?? 'RESOLVING';
}

const TYPE_LABELS: Record<EvidenceType, string> = {
  symptoms: 'symptoms',
  affected_resources: 'affected resources',
  logs: 'log excerpts',
  events: 'events',
  observations: 'observations',
  similar_incidents: 'a search of past incidents',
  pattern_analysis: 'a ranked pattern analysis',
  hypothesis: 'a hypothesis',
  test_plan: 'a test plan for the hypothesis',
  hypothesis_test_results: 'test results for the current hypothesis',
  confirmed_root_cause: 'a confirmed root cause',
  solution_plan: 'an approved remediation plan',
  rollback_plan: 'a rollback plan',
  fix_applied: 'a report that the fix was applied',
};

export function evidenceLabel(type: EvidenceType): string {
  return TYPE_LABELS[type];
}
