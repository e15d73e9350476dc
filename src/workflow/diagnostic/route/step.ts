import * as z from 'zod';
import { advance } from '../../../diagnosis/transitions.js';
import { MAX_HANDOFFS, SessionId } from '../../../limits.js';
import type { RemediationPlan } from '../../../review/plan.js';
import type { InboxMessage } from '../../../store/inbox.js';
import type { WorkflowDeps } from '../../deps.js';
import { addEvidence, rulesOf, stateEnteredAt } from '../../progress.js';
import { readScopeFor } from '../../read-scope.js';
import { lapseExpiredProposal } from '../handoff-steps.js';
import { answer, type RouteContext, type RouteResult } from './answers.js';
import { consume, finishInput } from './consume.js';
import { decide, type LoadedPlan } from './decide.js';

export { RecordReadPayload, RecordTestPayload, recordRead, recordTest } from '../record-steps.js';
export type { RouteResult } from './answers.js';

/**
 * The route step: one thread input in, one decision out. The input is consumed exactly once (`route/consume.ts`),
 * what it means is decided without I/O (`route/decide.ts`), and the decision is carried out by its answer
 * (`route/answers.ts`), which records it, tells the thread and names what the state machine runs next. Nothing
 * mutating is ever run: a change the gate allows is answered with the approved plan's own step.
 */

export const RoutePayload = z.object({ step: z.literal('route'), sessionId: SessionId, message: z.unknown() });

export async function route(deps: WorkflowDeps, p: z.infer<typeof RoutePayload>): Promise<RouteResult> {
  const message = await consume(deps, p.sessionId);
  if (!message) return { action: 'none', reason: 'no buffered input' };
  let result: RouteResult;
  try {
    result = await routeMessage(deps, p.sessionId, message);
  } catch (error) {
    // A message that fails is not retried forever: the failure is told in the thread, and the next input is next.
    await finishInput(deps, p.sessionId, message.id).catch(() => undefined);
    throw error;
  }
  await finishInput(deps, p.sessionId, message.id);
  return result;
}

async function loadPlan(deps: WorkflowDeps, sessionId: string, planId: string | undefined) {
  if (!planId) return undefined;
  const record = await deps.artifacts.getPlan(sessionId, planId);
  const plan = record?.plan as RemediationPlan | undefined;
  if (!record || !plan) return undefined;
  const loaded: LoadedPlan = {
    id: record.planId,
    title: plan.summary,
    ...(record.decidedBy ? { approvedBy: record.decidedBy } : {}),
    steps: plan.steps,
  };
  return loaded;
}

async function routeMessage(deps: WorkflowDeps, sessionId: string, message: InboxMessage): Promise<RouteResult> {
  await lapseExpiredProposal(deps, sessionId);
  let now = deps.now();
  const rules = rulesOf(deps);
  let session = await deps.store.sessions.getRequired(sessionId);
  let workflow = await deps.artifacts.getOrCreateWorkflow(sessionId, now);
  // Time counts too: a move a state's minimum time held back happens now, with its reason, before the input is read.
  const due = advance(
    {
      state: session.state,
      evidence: workflow.evidence,
      stateEnteredAt: stateEnteredAt(session, workflow),
      validation: workflow.validation,
      cycleStartedAt: workflow.cycleStartedAt,
    },
    now.toISOString(),
    rules,
  );
  if (due.steps.length > 0) {
    ({ session, workflow } = await addEvidence(deps, sessionId, []));
    // The input is read in the state the catch-up reached, so what it brings (a fix report, a confirmation) is newer
    // than that state's entry; stamped earlier, the rules would take it for evidence from before and ignore it.
    now = new Date(Math.max(deps.now().getTime(), Date.parse(stateEnteredAt(session, workflow)) + 1));
  }
  const envelope = await deps.artifacts.getEnvelope(sessionId);
  const plan = await loadPlan(deps, sessionId, workflow.approvedPlanId);
  const decision = decide(session, workflow, message, {
    now,
    rules,
    envelope,
    plan,
    readScope: readScopeFor(session, deps.policy),
    maxHandoffs: MAX_HANDOFFS,
  });
  const ctx: RouteContext = { session, workflow, message, envelope, cluster: session.cluster ?? 'default', now };
  return answer(deps, ctx, decision);
}
