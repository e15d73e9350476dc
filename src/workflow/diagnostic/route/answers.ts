import { type ReadSpec, ReadSpecSchema } from '../../../cluster/read-spec.js';
import { breakGlassAudit } from '../../../diagnosis/break-glass.js';
import { describeHold, walkTo } from '../../../diagnosis/transitions.js';
import { clip } from '../../../limits.js';
import { breakGlassEvent, panicSignalEvent } from '../../../memory/metrics.js';
import { escapeText } from '../../../mrkdwn/escape.js';
import { withStepDone } from '../../../review/plan-progress.js';
import type { InboxMessage } from '../../../store/inbox.js';
import type { SessionRecord } from '../../../store/sessions.js';
import type { Hypothesis, WorkflowRecord } from '../../../store/workflow-records.js';
import type { TriageEnvelope } from '../../../triage/envelope/index.js';
import { breakGlassFormOffer } from '../../../views/break-glass.js';
import { handoffOutcomeView, specialistName } from '../../../views/handoff.js';
import { blockedView, interventionView, replyView } from '../../../views/intervention.js';
import { postToSession } from '../../common.js';
import type { WorkflowDeps } from '../../deps.js';
import { recordEvent } from '../../events.js';
import { addEvidence, forcePanicState, rulesOf, stateEnteredAt } from '../../progress.js';
import { scopeRefusalText } from '../../read-scope.js';
import { requeue } from '../handoff-steps.js';
import { routeNamespace } from '../locate-steps.js';
import { memorySearch } from '../session-steps.js';
import { type Decision, type DecisionKind, type GatedDecision, guidanceText, isGated } from './decide.js';

/**
 * The answers to the route step's decisions, one per decision kind: each records what happened, posts what the
 * person sees and tells the state machine what to run next. Nothing here decides; `decide.ts` did.
 */

type ReadOut = ReadSpec & { cluster: string };

export type RouteResult =
  | { action: 'none'; reason: string }
  | { action: 'read'; read: ReadOut }
  | {
      action: 'test';
      hypothesis: { id: string; code: string; summary: string; cluster: string; reads: Hypothesis['reads'] };
    }
  | { action: 'handoff'; handoff: { domain: string; reason: string; askedBy: string } }
  | { action: 'specialist'; handoff: { domain: string } }
  | { action: 'handoff-denied'; handoff: { domain: string }; decision: { decision: 'deny'; userId: string } }
  | { action: 'review'; reviewSeq: number }
  | { action: 'break-glass'; breakGlass: { requestId: string } }
  | { action: 'resolved' }
  | { action: 'close' }
  | { action: 'locate'; namespace: string };

/** What every answer may use: the input and what was loaded to decide it. */
export interface RouteContext {
  session: SessionRecord;
  workflow: WorkflowRecord;
  message: InboxMessage;
  envelope: TriageEnvelope | undefined;
  cluster: string;
  now: Date;
}

type Answer<K extends DecisionKind> = (
  deps: WorkflowDeps,
  ctx: RouteContext,
  decision: Extract<Decision, { kind: K }>,
) => Promise<RouteResult>;

const none = (reason: string): RouteResult => ({ action: 'none', reason });

/**
 * A read as the cluster reader's payload accepts it: what a person typed becomes its title, cut to the payload's
 * bound; whatever still does not fit (a name longer than Kubernetes allows) is said in the thread, not sent.
 */
function fitReadSpec(spec: ReadSpec): { ok: true; spec: ReadSpec } | { ok: false; reason: string } {
  const parsed = ReadSpecSchema.safeParse({ ...spec, title: clip(spec.title, 300) });
  if (parsed.success) return { ok: true, spec: parsed.data };
  const issue = parsed.error.issues[0];
  const field = issue?.path.join('.') || 'the request';
  return { ok: false, reason: `${field} is not something a read can use (${issue?.message ?? 'invalid'})` };
}

function reply(deps: WorkflowDeps, ctx: RouteContext, text: string, note?: string) {
  return postToSession(deps, ctx.session, replyView(ctx.session.id, text, note));
}

function brief(request: GatedDecision['request']): Record<string, unknown> {
  const { parts: _parts, argv: _argv, ...rest } = request;
  return { ...rest, raw: request.raw.slice(0, 300) };
}

/** Lines for a reply: what came from the cluster or a person is shown as text, never read as markup. */
const lines = (items: readonly string[]) => items.map((l) => escapeText(l)).join('\n');

/**
 * Every gated request leaves the same trace, whatever its answer: it joins the recent requests (with what calmops
 * proposed that it followed), its panic signals join the history, `tool.requested` and each signal are recorded,
 * and a change under an override is audited. A plan step a person is answered for counts as done.
 */
async function recordRequest(deps: WorkflowDeps, ctx: RouteContext, decision: GatedDecision): Promise<void> {
  const { request, gate, followed } = decision;
  const at = ctx.now.toISOString();
  const step = followed.planStep;
  const planDone = step !== undefined && (decision.kind === 'change' || decision.kind === 'read');
  await deps.artifacts.mutateWorkflow(ctx.session.id, ctx.now, (w) => ({
    ...w,
    recentRequests: [
      ...w.recentRequests,
      {
        request: brief(request),
        at,
        ...(followed.guided ? { guided: true } : {}),
        ...(step?.inOrder ? { planStep: step.stepIndex } : {}),
        ...(decision.kind === 'off-plan' ? { outOfPlan: true } : {}),
      },
    ],
    panicHistory: [...w.panicHistory, ...gate.signals],
    ...(planDone && w.approvedPlanId
      ? { planProgress: withStepDone(w.planProgress ?? undefined, w.approvedPlanId, step.stepIndex) }
      : {}),
  }));
  await recordEvent(deps, ctx.session.id, 'tool.requested', {
    actor: ctx.message.userId,
    summary: `${request.kind} ${request.verb}: ${gate.code}`,
    data: {
      kind: request.kind,
      verb: request.verb,
      code: gate.code,
      allowed: gate.allowed,
      reason: gate.reason,
      effectiveState: gate.effectiveState,
      decision: decision.kind,
      ...(followed.guided ? { guided: true } : {}),
      ...(step ? { planStep: step.stepId, inOrder: step.inOrder } : {}),
    },
  });
  for (const signal of gate.signals) {
    const event = panicSignalEvent(signal, gate.intervention?.blocked ?? false);
    await recordEvent(deps, ctx.session.id, event.type, {
      actor: event.actor,
      summary: event.summary,
      data: event.data,
    });
  }
  if (gate.overrideActive && ctx.workflow.override && (request.kind === 'write' || request.kind === 'dangerous')) {
    const entry = breakGlassAudit('request-under-override', ctx.workflow.override, {
      at: ctx.now,
      actor: ctx.message.userId,
      details: {
        request: request.raw.slice(0, 500),
        allowed: decision.kind === 'change' ? decision.answer.matched : gate.allowed,
        ...(ctx.workflow.override.change ? { grantedFor: ctx.workflow.override.change } : {}),
      },
    });
    const event = breakGlassEvent(entry);
    await recordEvent(deps, ctx.session.id, event.type, {
      actor: event.actor,
      summary: event.summary,
      data: event.data,
    });
  }
}

/** The caution a low or medium signal adds to an allowed request, as its own message. */
async function caution(deps: WorkflowDeps, ctx: RouteContext, decision: GatedDecision): Promise<void> {
  if (!decision.gate.warning) return;
  await postToSession(
    deps,
    ctx.session,
    interventionView({
      sessionId: ctx.session.id,
      blocked: false,
      message: decision.gate.warning,
      recommendedActions: [],
    }),
  );
}

const ANSWERS: { [K in DecisionKind]: Answer<K> } = {
  async 'break-glass'(deps, ctx, d) {
    // The request itself is audited once, by the break-glass run (`break-glass.requested`); this only says it arrived.
    await recordEvent(deps, ctx.session.id, 'break-glass.received', {
      actor: ctx.message.userId,
      data: { requestId: d.requestId },
    });
    return { action: 'break-glass', breakGlass: { requestId: d.requestId } };
  },
  async close() {
    return { action: 'close' };
  },
  locate(deps, ctx, d) {
    return routeNamespace(deps, {
      session: ctx.session,
      message: ctx.message,
      workflow: ctx.workflow,
      answer: d.answer,
    });
  },
  async 'stale-hypothesis'(deps, ctx, d) {
    await reply(deps, ctx, escapeText(d.text));
    return none('unknown hypothesis');
  },
  async panic(deps, ctx, d) {
    if (ctx.session.state === 'RESOLVING' && ctx.workflow.approvedPlanId) {
      // The request is blocked and the calming message stands, but a reviewed, approved plan is not thrown away
      // by a burst: the session stays in RESOLVING with it.
      await postToSession(
        deps,
        ctx.session,
        interventionView({
          sessionId: ctx.session.id,
          blocked: true,
          message: d.gate.intervention?.message ?? d.gate.guidance,
          recommendedActions: d.gate.intervention?.recommendedActions ?? [],
          guidance: `The approved plan stays in force and the session stays in RESOLVING: work through its steps one at a time. ${guidanceText(ctx.session, ctx.workflow)}`,
        }),
      );
      return none('panic intervention');
    }
    const moved = await forcePanicState(deps, ctx.session.id, `Panic intervention: ${d.gate.reason}`.slice(0, 1000));
    await postToSession(
      deps,
      moved.session,
      interventionView({
        sessionId: ctx.session.id,
        blocked: true,
        message: d.gate.intervention?.message ?? d.gate.guidance,
        recommendedActions: d.gate.intervention?.recommendedActions ?? [],
        ...(moved.transitions.length > 0 ? { forcedState: moved.session.state } : {}),
        guidance: guidanceText(moved.session, moved.workflow),
      }),
    );
    return none('panic intervention');
  },
  async refuse(deps, ctx, d) {
    await postToSession(deps, ctx.session, blockedView(ctx.session.id, d.gate.reason, d.gate.guidance));
    return none(d.gate.code);
  },
  async hold(deps, ctx, d) {
    await postToSession(
      deps,
      ctx.session,
      blockedView(ctx.session.id, d.text, guidanceText(ctx.session, ctx.workflow)),
    );
    return none('hypothesis held');
  },
  async read(deps, ctx, d) {
    const fitted = fitReadSpec(d.spec);
    if (!fitted.ok) {
      // Consumed with a reply: an input that cannot be run must not fail the step and stall the session.
      await reply(deps, ctx, `:warning: I could not run that read: ${escapeText(fitted.reason)}. Nothing was read.`);
      return none('read not runnable');
    }
    if (d.facts.length > 0) await reply(deps, ctx, `:mag: *What the triage found*\n${lines(d.facts)}`);
    await caution(deps, ctx, d);
    return { action: 'read', read: { ...fitted.spec, cluster: ctx.cluster } };
  },
  async 'read-refused'(deps, ctx, d) {
    await recordEvent(deps, ctx.session.id, 'read.refused', {
      actor: ctx.message.userId,
      summary: `${d.spec.title.slice(0, 200)}: ${d.scope.code}`,
      data: { code: d.scope.code, kind: d.spec.kind, verb: d.spec.verb, namespace: d.spec.namespace ?? null },
    });
    const known = d.facts.length > 0 ? `\n:mag: *What the triage found*\n${lines(d.facts)}` : '';
    await reply(deps, ctx, `${scopeRefusalText(d.spec.title, d.scope)}${known}`, d.gate.warning);
    return none('read outside the session scope');
  },
  async answer(deps, ctx, d) {
    await reply(deps, ctx, lines(d.lines), d.gate.warning);
    return none('answered from the evidence');
  },
  async memory(deps, ctx, d) {
    await caution(deps, ctx, d);
    await memorySearch(deps, { step: 'memory-search', sessionId: ctx.session.id });
    return none('memory searched');
  },
  async inspect(deps, ctx, d) {
    await reply(deps, ctx, d.gate.guidance, d.gate.warning);
    return none(d.gate.code);
  },
  async change(deps, ctx, d) {
    await recordEvent(deps, ctx.session.id, 'change.answered', {
      actor: ctx.message.userId,
      summary: d.answer.matched ? `Answered with plan step ${d.answer.step.id}` : d.answer.reason,
      data: {
        matched: d.answer.matched,
        ...(d.answer.matched ? { step: d.answer.step.id, safety: d.answer.safety } : {}),
        ...(d.followed.planStep ? { inOrder: d.followed.planStep.inOrder } : {}),
      },
    });
    await reply(deps, ctx, d.answer.message, d.gate.warning);
    return none('answered from plan');
  },
  async 'off-plan'(deps, ctx, d) {
    await recordEvent(deps, ctx.session.id, 'change.refused', {
      actor: ctx.message.userId,
      summary: d.answer.matched ? d.gate.reason : d.answer.reason,
      data: { code: d.gate.code, reason: d.answer.matched ? d.gate.reason : d.answer.reason },
    });
    const what = d.gate.overrideActive ? 'Not what the override was granted for.' : 'Not in the approved plan.';
    await reply(deps, ctx, `:no_entry_sign: *${what}* ${d.answer.message}`, d.gate.guidance);
    return none(d.gate.code);
  },
  async hypothesis(deps, ctx, d) {
    const hypothesis = d.hypothesis;
    const progress = await addEvidence(deps, ctx.session.id, d.evidence, (w) => ({
      ...w,
      hypotheses: w.hypotheses.map((h) => (h.id === hypothesis?.id ? { ...h, status: 'testing' as const } : h)),
      ...(hypothesis ? { activeHypothesisId: hypothesis.id } : {}),
    }));
    if (progress.session.state !== 'TESTING') {
      // The rules moved less than the decision foresaw (a concurrent change): say where it stopped, test nothing.
      const walk = walkTo(
        {
          state: progress.session.state,
          evidence: progress.workflow.evidence,
          stateEnteredAt: stateEnteredAt(progress.session, progress.workflow),
          validation: progress.workflow.validation,
          cycleStartedAt: progress.workflow.cycleStartedAt,
        },
        [],
        'TESTING',
        ctx.now.toISOString(),
        rulesOf(deps),
      );
      const why = walk.reached ? '' : ` ${describeHold(walk.hold)}.`;
      await reply(deps, ctx, `Hypothesis noted, but the session is in ${progress.session.state}.${why}`);
      return none('hypothesis held');
    }
    if (!hypothesis) {
      await reply(
        deps,
        ctx,
        'Hypothesis noted; the session is in TESTING. Test it with a read (for example `kubectl describe …`), then reply `confirmed` if it holds.',
        d.gate.warning,
      );
      return none('free-text hypothesis');
    }
    await caution(deps, ctx, d);
    return {
      action: 'test',
      hypothesis: {
        id: hypothesis.id,
        code: hypothesis.code,
        summary: hypothesis.summary,
        cluster: ctx.cluster,
        reads: hypothesis.reads,
      },
    };
  },
  async confirm(deps, ctx, d) {
    const progress = await addEvidence(deps, ctx.session.id, d.evidence, (w) => ({
      ...w,
      hypotheses: w.hypotheses.map((h) => (h.id === w.activeHypothesisId ? { ...h, status: 'confirmed' as const } : h)),
      reviewSeq: w.reviewSeq + 1,
    }));
    await recordEvent(deps, ctx.session.id, 'root-cause.confirmed', {
      actor: ctx.message.userId,
      summary: (d.evidence[0]?.description ?? d.request.raw).slice(0, 1000),
      data: { code: d.evidence[0]?.code ?? null, state: progress.session.state },
    });
    await reply(
      deps,
      ctx,
      `:memo: Root cause confirmed. Drafting a remediation plan; it goes through review before anyone runs it, and the session moves on to RESOLVING once a reviewer approves it (now ${progress.session.state}).`,
    );
    return { action: 'review', reviewSeq: progress.workflow.reviewSeq };
  },
  async fix(deps, ctx, d) {
    // The rules move the session back to GATHERING with what the fix must have removed; the state machine then
    // triages again and validate-fix judges the result.
    await addEvidence(deps, ctx.session.id, d.evidence);
    await reply(
      deps,
      ctx,
      `:mag: Validating the fix: running the *${ctx.session.intent}* checks on \`${ctx.session.namespace}\` again before the incident is closed.`,
    );
    return { action: 'resolved' };
  },
  async 'break-glass-form'(deps, ctx, d) {
    await postToSession(deps, ctx.session, breakGlassFormOffer(ctx.session.id, d.gate.guidance));
    return none(d.gate.code);
  },
  async handoff(_deps, ctx, d) {
    return {
      action: 'handoff',
      handoff: { domain: d.domain, reason: `asked for the ${d.domain} specialist.`, askedBy: ctx.message.userId },
    };
  },
  async 'handoff-decided'(deps, ctx, d) {
    let held: WorkflowRecord['heldChanges'] = [];
    await deps.artifacts.mutateWorkflow(ctx.session.id, ctx.now, (w) => {
      held = w.heldChanges;
      return { ...w, pendingHandoff: null, heldChanges: [] };
    });
    // The changes that waited for this answer come next, in the order they were asked.
    await requeue(deps, ctx.session.id, held);
    if (!d.approve) {
      return {
        action: 'handoff-denied',
        handoff: { domain: d.domain },
        decision: { decision: 'deny', userId: ctx.message.userId },
      };
    }
    await reply(deps, ctx, `:hourglass_flowing_sand: Consulting the ${specialistName(d.domain)} now.`);
    return { action: 'specialist', handoff: { domain: d.domain } };
  },
  async held(deps, ctx, d) {
    await deps.artifacts.mutateWorkflow(ctx.session.id, ctx.now, (w) => ({
      ...w,
      heldChanges: [
        ...w.heldChanges,
        { userId: ctx.message.userId, text: ctx.message.text.slice(0, 40_000), kind: ctx.message.kind },
      ].slice(-10),
    }));
    await reply(
      deps,
      ctx,
      `:hourglass_flowing_sand: That change waits until the ${d.domain} specialist proposal above is answered; it is kept and answered right after. Reads and questions are answered meanwhile.`,
    );
    return none('change held behind the specialist proposal');
  },
  async 'handoff-open'(deps, ctx, d) {
    await reply(
      deps,
      ctx,
      `The ${d.domain} specialist is already proposed above: *Yes, consult* runs it, *No, thanks* declines. Reads and questions are answered meanwhile.`,
    );
    return none('handoff already proposed');
  },
  async 'handoff-limit'(deps, ctx, d) {
    await postToSession(deps, ctx.session, handoffOutcomeView(ctx.session.id, d.domain, 'limit'));
    return none('handoff limit');
  },
  async 'handoff-which'(deps, ctx) {
    await reply(deps, ctx, 'Which specialist? I can consult the compute, storage, network or platform specialist.');
    return none('no specialist domain');
  },
  async guide(deps, ctx, d) {
    await reply(deps, ctx, escapeText(d.text), d.gate.warning);
    return none('conversation');
  },
  async silent() {
    return none('conversation');
  },
};

/** Carries a decision out: the request's trace first (for gated decisions), then its answer. */
export async function answer(deps: WorkflowDeps, ctx: RouteContext, decision: Decision): Promise<RouteResult> {
  if (isGated(decision)) await recordRequest(deps, ctx, decision);
  const run = ANSWERS[decision.kind] as Answer<DecisionKind>;
  return run(deps, ctx, decision as never);
}
