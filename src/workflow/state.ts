import {
  advance,
  currentEvidence,
  type EvidenceItem,
  evidenceCompleteness,
  mergeEvidence,
  validationOutcome,
} from '../diagnosis/evidence.js';
import type { DiagnosticState } from '../diagnosis/states.js';
import { fixValidatedEvent } from '../memory/metrics.js';
import type { SessionPatch, SessionRecord } from '../store/sessions.js';
import type { WorkflowRecord } from './artifacts.js';
import type { WorkflowDeps } from './deps.js';
import { recordEvent } from './events.js';

/**
 * The diagnostic state of a session: evidence goes in, transitions come out (each with its reason on the timeline),
 * and the session item the Slack side reads mirrors the result.
 */

export interface Transition {
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

/** Adds evidence and lets the evidence rules move the session as far as they allow. */
export async function addEvidence(
  deps: WorkflowDeps,
  sessionId: string,
  items: readonly EvidenceItem[],
  extra: (w: WorkflowRecord) => WorkflowRecord = (w) => w,
): Promise<Progress> {
  const at = deps.now().toISOString();
  const session = await deps.store.sessions.getRequired(sessionId);
  const transitions: Transition[] = [];
  const validations: ValidationResult[] = [];
  const workflow = await deps.artifacts.mutateWorkflow(sessionId, deps.now(), (w) => {
    transitions.length = 0;
    validations.length = 0;
    const merged = extra({ ...w, evidence: mergeEvidence(w.evidence, items) });
    const { snapshot, steps } = advance(
      {
        state: session.state,
        evidence: merged.evidence,
        stateEnteredAt: merged.stateEnteredAt,
        validation: merged.validation,
        cycleStartedAt: merged.cycleStartedAt,
      },
      at,
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
      stateEnteredAt: transitions.length > 0 ? at : merged.stateEnteredAt,
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
 * Moves the session to `to` outside the evidence rules: a panic intervention (back to ANALYZING), a chosen
 * hypothesis (TESTING), a confirmed root cause (RESOLVING). Recorded with its reason like any other transition.
 */
export async function forceState(
  deps: WorkflowDeps,
  sessionId: string,
  to: DiagnosticState,
  cause: string,
  reason: string,
  extra: (w: WorkflowRecord) => WorkflowRecord = (w) => w,
): Promise<Progress> {
  const at = deps.now().toISOString();
  const session = await deps.store.sessions.getRequired(sessionId);
  const workflow = await deps.artifacts.mutateWorkflow(sessionId, deps.now(), (w) =>
    extra({
      ...w,
      stateEnteredAt: session.state === to ? w.stateEnteredAt : at,
      ...(cause === 'panic-intervention' ? { cycleStartedAt: at } : {}),
    }),
  );
  const transitions: Transition[] = session.state === to ? [] : [{ from: session.state, to, cause, reason }];
  const synced = await syncSession(deps, sessionId, workflow, { state: to });
  for (const t of transitions) await recordEvent(deps, sessionId, 'state.changed', { summary: reason, data: { ...t } });
  return { session: synced, workflow, transitions, validations: [] };
}

/** The session item's summary of the workflow: what status views and metrics read. */
export async function syncSession(
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
        completeness: evidenceCompleteness(evidence),
        items: evidence.slice(-200).map((e) => ({
          kind: e.type,
          source: e.source,
          summary: e.description.slice(0, 2000),
          at: new Date(e.at).toISOString(),
          codes: e.code ? [e.code.slice(0, 64)] : [],
        })),
        findingCodes: [...new Set(evidence.flatMap((e) => (e.code ? [e.code.slice(0, 64)] : [])))].slice(0, 200),
      },
      hypotheses: workflow.hypotheses.slice(0, 50).map((h) => ({
        id: h.id,
        statement: `${h.code}: ${h.summary}`.slice(0, 2000),
        confidence: h.confidence,
        status: h.status,
        evidence: h.reads.map((r) => r.title.slice(0, 500)),
      })),
    }),
    { now: deps.now },
  );
}
