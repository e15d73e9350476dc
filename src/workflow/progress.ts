import { currentEvidence, type EvidenceItem, mergeEvidence } from '../diagnosis/evidence.js';
import { evidenceFigure } from '../diagnosis/evidence-requirements.js';
import { type DiagnosticState, type TransitionRules, transitionRules } from '../diagnosis/state-machine.js';
import { advance, validationOutcome } from '../diagnosis/transitions.js';
import { SUMMARY_MAX } from '../limits.js';
import { fixValidatedEvent } from '../memory/metrics.js';
import type { SessionPatch, SessionRecord } from '../store/sessions.js';
import type { WorkflowRecord } from '../store/workflow-records.js';
import type { WorkflowDeps } from './deps.js';
import { recordEvent } from './events.js';

/**
 * The diagnostic state of a session: evidence goes in, transitions come out (each with its reason on the timeline),
 * and the session item the Slack side reads mirrors the result. The transitions themselves are decided in one place,
 * `advance` in src/diagnosis/transitions.ts; this module only stores what it decided.
 */

interface Transition {
  from: DiagnosticState;
  to: DiagnosticState;
  cause: string;
  reason: string;
}

export interface ValidationResult {
  passed: boolean;
  reason: string;
}

export interface Progress {
  session: SessionRecord;
  workflow: WorkflowRecord;
  transitions: Transition[];
  /** Fix validations the evidence concluded (passed, still failing, or not provable yet), in order. */
  validations: ValidationResult[];
}

/** The timing rules this deployment enforces (CALMOPS_MIN_TIME_IN_STATE_SECONDS). */
export function rulesOf(deps: Pick<WorkflowDeps, 'timeouts'>): TransitionRules {
  return transitionRules(deps.timeouts.minTimeInStateSeconds);
}

/** When the session entered its state: a session's first state began when the session did. */
export function stateEnteredAt(session: Pick<SessionRecord, 'createdAt'>, workflow: WorkflowRecord): string {
  return workflow.version === 0 ? new Date(session.createdAt).toISOString() : workflow.stateEnteredAt;
}

/**
 * Adds evidence and lets the transition rules move the session as far as they allow. With no items it only lets
 * time count: a move held back by a state's minimum time happens at the next call after the time is up.
 */
export async function addEvidence(
  deps: WorkflowDeps,
  sessionId: string,
  items: readonly EvidenceItem[],
  extra: (w: WorkflowRecord) => WorkflowRecord = (w) => w,
): Promise<Progress> {
  const at = deps.now().toISOString();
  const rules = rulesOf(deps);
  const session = await deps.store.sessions.getRequired(sessionId);
  const transitions: Transition[] = [];
  const validations: ValidationResult[] = [];
  const workflow = await deps.artifacts.mutateWorkflow(sessionId, deps.now(), (w) => {
    transitions.length = 0;
    validations.length = 0;
    const entered = stateEnteredAt(session, w);
    const merged = extra({ ...w, evidence: mergeEvidence(w.evidence, items) });
    const { snapshot, steps } = advance(
      {
        state: session.state,
        evidence: merged.evidence,
        stateEnteredAt: entered,
        validation: merged.validation,
        cycleStartedAt: merged.cycleStartedAt,
      },
      at,
      rules,
    );
    for (const step of steps) {
      if (step.kind === 'transition') {
        transitions.push({ from: step.from, to: step.to, cause: step.cause, reason: step.reason });
      }
      const outcome = validationOutcome(step);
      if (outcome) validations.push(outcome);
    }
    return {
      ...merged,
      stateEnteredAt: transitions.length > 0 ? at : entered,
      validation: snapshot.validation ?? null,
      cycleStartedAt: snapshot.cycleStartedAt ?? null,
    };
  });
  const finalState = transitions.at(-1)?.to ?? session.state;
  const synced = await syncSession(deps, sessionId, workflow, { state: finalState });
  for (const t of transitions) {
    await recordEvent(deps, sessionId, 'state.changed', { summary: t.reason, data: { ...t } });
  }
  for (const v of validations) {
    const event = fixValidatedEvent(v.passed, v.reason);
    await recordEvent(deps, sessionId, event.type, { summary: event.summary, data: event.data });
  }
  return { session: synced, workflow, transitions, validations };
}

/**
 * A panic intervention: back to ANALYZING with a new reasoning cycle, outside the evidence rules (the ADR's forced
 * transition). Recorded with its reason like any other transition. Nothing else moves a session this way.
 */
export async function forcePanicState(deps: WorkflowDeps, sessionId: string, reason: string): Promise<Progress> {
  const to: DiagnosticState = 'ANALYZING';
  const at = deps.now().toISOString();
  const session = await deps.store.sessions.getRequired(sessionId);
  const workflow = await deps.artifacts.mutateWorkflow(sessionId, deps.now(), (w) => ({
    ...w,
    stateEnteredAt: session.state === to ? stateEnteredAt(session, w) : at,
    cycleStartedAt: at,
  }));
  const transitions: Transition[] =
    session.state === to ? [] : [{ from: session.state, to, cause: 'panic-intervention', reason }];
  const synced = await syncSession(deps, sessionId, workflow, { state: to });
  for (const t of transitions) await recordEvent(deps, sessionId, 'state.changed', { summary: reason, data: { ...t } });
  return { session: synced, workflow, transitions, validations: [] };
}

/** The session item's summary of the workflow: what status views and metrics read. */
async function syncSession(
  deps: WorkflowDeps,
  sessionId: string,
  workflow: WorkflowRecord,
  patch: SessionPatch = {},
): Promise<SessionRecord> {
  const evidence = currentEvidence(workflow);
  return deps.store.sessions.mutate(
    sessionId,
    () => ({
      ...patch,
      evidence: {
        // The same figure the envelope shows: a second percentage for "workflow progress" only confused people.
        completeness: evidenceFigure(workflow.evidence)?.value ?? 0,
        items: evidence.slice(-200).map((e) => ({
          kind: e.type,
          source: e.source,
          summary: e.description.slice(0, SUMMARY_MAX),
          at: new Date(e.at).toISOString(),
          codes: e.code ? [e.code.slice(0, 64)] : [],
        })),
        findingCodes: [...new Set(evidence.flatMap((e) => (e.code ? [e.code.slice(0, 64)] : [])))].slice(0, 200),
      },
      hypotheses: workflow.hypotheses.slice(0, 50).map((h) => ({
        id: h.id,
        statement: `${h.code}: ${h.summary}`.slice(0, SUMMARY_MAX),
        confidence: h.confidence,
        status: h.status,
        evidence: h.reads.map((r) => r.title.slice(0, 500)),
      })),
    }),
    { now: deps.now },
  );
}
