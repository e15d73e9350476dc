import * as z from 'zod';
import { breakGlassAudit } from '../diagnosis/break-glass.js';
import { classifyRequest } from '../diagnosis/commands.js';
import {
  currentEvidence,
  evidenceFromConfirmation,
  evidenceFromHypothesis,
  evidenceFromRead,
  evidenceFromResolved,
  formatMissing,
  missingEvidence,
} from '../diagnosis/evidence.js';
import { gateRequest } from '../diagnosis/gate.js';
import type { RecordedRequest } from '../diagnosis/panic.js';
import type { UserRequest } from '../diagnosis/request.js';
import { type ApprovedPlan, answerFromPlan } from '../diagnosis/resolving.js';
import { STATE_MACHINE } from '../diagnosis/states.js';
import { breakGlassEvent, panicSignalEvent } from '../memory/metrics.js';
import type { RemediationPlan } from '../review/plan.js';
import { breakGlassFormOffer } from '../slack/views/break-glass.js';
import { hypothesisChoiceBlocks } from '../slack/views/envelope.js';
import { handoffOutcomeView } from '../slack/views/handoff.js';
import { blockedView, interventionView, replyView } from '../slack/views/intervention.js';
import { context, fitMessage, reportPointer, section } from '../slack/views/limits.js';
import { readResultView } from '../slack/views/read-result.js';
import type { InboxMessage } from '../store/inbox.js';
import type { SessionRecord } from '../store/sessions.js';
import { type Hypothesis, ReadSpecSchema, type WorkflowRecord } from './artifacts.js';
import { postToSession, SessionIdSchema } from './common.js';
import type { WorkflowDeps } from './deps.js';
import { recordEvent } from './events.js';
import { routeNamespace } from './locate-steps.js';
import { checkReadScope, readScopeFor, scopeRefusalText } from './read-scope.js';
import { readSpecFromRequest } from './reads.js';
import { MAX_HANDOFFS } from './session-steps.js';
import { addEvidence, forceState } from './state.js';

/**
 * The route step: one thread input in, one decision out. It classifies the message, runs the panic detector and the
 * gate, records every decision (and every state change, with its reason) on the timeline, answers what needs no read
 * right here, and tells the state machine what to run next. Nothing mutating is ever run: a change request that the
 * gate allows is answered with the approved plan's command, rollback and safety label.
 */

export const RoutePayload = z.object({ step: z.literal('route'), sessionId: SessionIdSchema, message: z.unknown() });

const ActionSchema = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('hypothesis'), hypothesisId: z.string() }),
    z.object({ type: z.literal('resolved') }),
    z.object({ type: z.literal('break-glass'), requestId: z.string() }),
    z.object({ type: z.literal('namespace'), namespace: z.string().min(1).max(253) }),
  ])
  .optional();

type ReadOut = z.infer<typeof ReadSpecSchema> & { cluster: string };

export type RouteResult =
  | { action: 'none'; reason: string }
  | { action: 'read'; read: ReadOut }
  | {
      action: 'test';
      hypothesis: { id: string; code: string; summary: string; cluster: string; reads: Hypothesis['reads'] };
    }
  | { action: 'handoff'; handoff: { domain: string; reason: string } }
  | { action: 'review'; reviewSeq: number }
  | { action: 'break-glass'; breakGlass: { requestId: string } }
  | { action: 'resolved' }
  | { action: 'close' }
  | { action: 'locate'; namespace: string };

const CLOSE = /^\s*(close|close (this )?session|cancel (this )?session|end (this )?session)\s*[.!]?\s*$/i;

/**
 * Takes the oldest buffered input exactly once: a key seen before (a retried append) is dropped. The message stays
 * in the inbox, marked as taken, until the route step that handles it has finished (`finishInput`), so a step that
 * dies midway (a crash, a lost run) leaves it to be handled again rather than lost; its consumption is still
 * recorded once.
 */
async function consume(deps: WorkflowDeps, sessionId: string): Promise<InboxMessage | undefined> {
  for (let round = 0; round < 5; round++) {
    const message = await deps.store.inbox.peekOldest(sessionId);
    if (!message) return undefined;
    const key = typeof message.data?.['messageKey'] === 'string' ? (message.data['messageKey'] as string) : message.id;
    const seen: { state: 'new' | 'again' | 'duplicate'; markedAt?: string | undefined } = { state: 'new' };
    const at = deps.now().toISOString();
    await deps.artifacts.mutateWorkflow(sessionId, deps.now(), (w) => {
      if (w.lastInboxId === message.id) {
        seen.state = 'again';
        seen.markedAt = w.lastInboxAt;
        return w;
      }
      seen.state = w.consumedKeys.includes(key) ? 'duplicate' : 'new';
      if (seen.state === 'duplicate') return w;
      return { ...w, consumedKeys: [...w.consumedKeys, key], lastInboxId: message.id, lastInboxAt: at };
    });
    if (seen.state === 'duplicate') {
      await deps.store.inbox.remove(sessionId, message.id);
      await recordEvent(deps, sessionId, 'input.duplicate', {
        summary: `Dropped a repeat of ${key}`,
        data: { messageId: message.id, key },
      });
      continue;
    }
    await deps.store.inbox.take(sessionId, message.id, deps.now());
    if (seen.state === 'new' || !(await consumedEventRecorded(deps, sessionId, message.id, seen.markedAt))) {
      await recordEvent(deps, sessionId, 'input.consumed', {
        actor: message.userId,
        summary: message.text.slice(0, 300),
        data: { messageId: message.id, key, kind: message.kind },
      });
    }
    return message;
  }
  return undefined;
}

/** Whether a route step that died after marking the message also recorded its consumption. */
async function consumedEventRecorded(
  deps: WorkflowDeps,
  sessionId: string,
  messageId: string,
  markedAt: string | undefined,
): Promise<boolean> {
  const since = markedAt === undefined ? undefined : new Date(Date.parse(markedAt) - 1).toISOString();
  const events = await deps.store.timeline.list(sessionId, since === undefined ? {} : { after: { at: since, seq: 0 } });
  return events.some((e) => e.type === 'input.consumed' && e.data?.['messageId'] === messageId);
}

function guidance(state: SessionRecord['state'], workflow: WorkflowRecord): string {
  const gaps = missingEvidence(state, currentEvidence(workflow));
  return `${STATE_MACHINE[state].guidance}${gaps.length > 0 ? ` Still needed: ${formatMissing(gaps)}.` : ''}`;
}

function approvedPlanOf(
  record: { plan?: Record<string, unknown> | undefined; planId: string; decidedBy?: string | undefined } | undefined,
): ApprovedPlan | undefined {
  const plan = record?.plan as RemediationPlan | undefined;
  if (!record || !plan) return undefined;
  return {
    id: record.planId,
    title: plan.summary,
    ...(record.decidedBy ? { approvedBy: record.decidedBy } : {}),
    steps: plan.steps.map((s) => ({
      id: s.id,
      command: s.command,
      mode: s.mode,
      description: s.description,
      safety: s.safety,
      ...(s.rollback ? { rollback: s.rollback } : {}),
    })),
  };
}

function brief(request: UserRequest): Record<string, unknown> {
  const { parts: _parts, argv: _argv, ...rest } = request;
  return { ...rest, raw: request.raw.slice(0, 300) };
}

export async function route(deps: WorkflowDeps, p: z.infer<typeof RoutePayload>): Promise<RouteResult> {
  const message = await consume(deps, p.sessionId);
  if (!message) return { action: 'none', reason: 'no buffered input' };
  let result: RouteResult;
  try {
    result = await routeMessage(deps, p, message);
  } catch (error) {
    // A message that fails is not retried forever: the failure is told in the thread, and the next input is next.
    await deps.store.inbox.remove(p.sessionId, message.id).catch(() => undefined);
    throw error;
  }
  await deps.store.inbox.remove(p.sessionId, message.id);
  return result;
}

async function routeMessage(
  deps: WorkflowDeps,
  p: z.infer<typeof RoutePayload>,
  message: InboxMessage,
): Promise<RouteResult> {
  const session = await deps.store.sessions.getRequired(p.sessionId);
  const cluster = session.cluster ?? 'default';
  const now = deps.now();
  const at = now.toISOString();
  const action = ActionSchema.safeParse(message.data?.['action']);
  const workflow = await deps.artifacts.getOrCreateWorkflow(p.sessionId, now);
  const reply = (text: string, note?: string) => postToSession(deps, session, replyView(session.id, text, note));

  if (action.success && action.data?.type === 'break-glass') {
    await recordEvent(deps, session.id, 'break-glass.requested', {
      actor: message.userId,
      data: { requestId: action.data.requestId },
    });
    return { action: 'break-glass', breakGlass: { requestId: action.data.requestId } };
  }
  if (CLOSE.test(message.text) && !action.data) {
    return { action: 'close' };
  }
  const pick = action.success && action.data?.type === 'namespace' ? action.data.namespace : undefined;
  if (pick !== undefined || session.namespace === '') {
    return routeNamespace(deps, {
      session,
      message,
      workflow,
      answer: pick === undefined ? { from: 'message' } : { from: 'button', namespace: pick },
    });
  }

  let request: UserRequest;
  let chosen: Hypothesis | undefined;
  if (action.success && action.data?.type === 'hypothesis') {
    const id = action.data.hypothesisId;
    chosen = workflow.hypotheses.find((h) => h.id === id);
    if (!chosen) {
      await reply(`That hypothesis is no longer on the list. ${guidance(session.state, workflow)}`);
      return { action: 'none', reason: 'unknown hypothesis' };
    }
    request = classifyRequest(`hypothesis ${chosen.rank}`);
  } else if (action.success && action.data?.type === 'resolved') {
    request = classifyRequest('resolved');
  } else {
    request = classifyRequest(message.text);
  }

  const decision = gateRequest(
    {
      state: session.state,
      evidence: workflow.evidence,
      override: workflow.override,
      recentRequests: workflow.recentRequests as unknown as RecordedRequest[],
      panicHistory: workflow.panicHistory,
      cycleStartedAt: workflow.cycleStartedAt,
    },
    request,
    now,
  );
  await deps.artifacts.mutateWorkflow(session.id, now, (w) => ({
    ...w,
    recentRequests: [...w.recentRequests, { request: brief(request), at }],
    panicHistory: [...w.panicHistory, ...decision.signals],
  }));
  await recordEvent(deps, session.id, 'tool.requested', {
    actor: message.userId,
    summary: `${request.kind} ${request.verb}: ${decision.code}`,
    data: {
      kind: request.kind,
      verb: request.verb,
      code: decision.code,
      allowed: decision.allowed,
      reason: decision.reason,
      effectiveState: decision.effectiveState,
    },
  });
  for (const signal of decision.signals) {
    const event = panicSignalEvent(signal, decision.intervention?.blocked ?? false);
    await recordEvent(deps, session.id, event.type, { actor: event.actor, summary: event.summary, data: event.data });
  }
  if (decision.overrideActive && workflow.override && (request.kind === 'write' || request.kind === 'dangerous')) {
    const entry = breakGlassAudit('request-under-override', workflow.override, {
      at: now,
      actor: message.userId,
      details: { request: request.raw.slice(0, 500), allowed: decision.allowed },
    });
    const event = breakGlassEvent(entry);
    await recordEvent(deps, session.id, event.type, { actor: event.actor, summary: event.summary, data: event.data });
  }

  if (decision.code === 'BLOCKED_BY_PANIC' && decision.intervention) {
    const moved = await forceState(
      deps,
      session.id,
      decision.forcedState ?? 'ANALYZING',
      'panic-intervention',
      `Panic intervention: ${decision.reason}`.slice(0, 1000),
    );
    await postToSession(
      deps,
      moved.session,
      interventionView({
        sessionId: session.id,
        blocked: true,
        message: decision.intervention.message,
        recommendedActions: decision.intervention.recommendedActions,
        ...(moved.transitions.length > 0 ? { forcedState: moved.session.state } : {}),
        guidance: guidance(moved.session.state, moved.workflow),
      }),
    );
    return { action: 'none', reason: 'panic intervention' };
  }
  const warning = decision.warning;
  let code = decision.code;
  if (code === 'HYPOTHESIS_TOO_EARLY') {
    // A ranked cause from a triage whose evidence met its threshold is already a supported theory: the evidence
    // rules count symptoms, and one decisive finding is one symptom.
    const ranked = chosen ?? workflow.hypotheses.find((h) => h.rank === request.hypothesisRank);
    const envelope = ranked ? await deps.artifacts.getEnvelope(session.id) : undefined;
    if (ranked && envelope && envelope.evidence.completeness >= envelope.evidence.threshold) {
      code = 'HYPOTHESIS_RECORDED';
      chosen = ranked;
    }
  }
  if (!decision.allowed && code === decision.code) {
    await postToSession(deps, session, blockedView(session.id, decision.reason, decision.guidance));
    return { action: 'none', reason: decision.code };
  }

  switch (code) {
    case 'READ_ALLOWED': {
      const spec = readSpecFromRequest(request, session.namespace);
      if (!spec) {
        if (message.kind === 'message' && request.source === 'natural-language' && !request.resource) {
          return { action: 'none', reason: 'conversation' };
        }
        await reply(
          'I can read pods, events, logs, PVCs, PVs, StorageClasses, nodes, deployments, services, endpoints, ingresses, routes and configmaps. Name one, e.g. `kubectl get pods` or `kubectl logs <pod>`.',
        );
        return { action: 'none', reason: 'nothing to read' };
      }
      const scope = checkReadScope(spec, readScopeFor(session, deps.policy), {
        allNamespaces: request.allNamespaces,
      });
      if (!scope.allowed) {
        await recordEvent(deps, session.id, 'read.refused', {
          actor: message.userId,
          summary: `${spec.title.slice(0, 200)}: ${scope.code}`,
          data: { code: scope.code, kind: spec.kind, verb: spec.verb, namespace: spec.namespace ?? null },
        });
        await reply(scopeRefusalText(spec.title, scope), warning);
        return { action: 'none', reason: 'read outside the session scope' };
      }
      if (warning)
        await postToSession(
          deps,
          session,
          interventionView({ sessionId: session.id, blocked: false, message: warning, recommendedActions: [] }),
        );
      return { action: 'read', read: { ...spec, cluster } };
    }
    case 'INSPECT_ALLOWED':
      await reply(decision.guidance, warning);
      return { action: 'none', reason: decision.code };
    case 'CHANGE_ALLOWED': {
      const planRecord = workflow.approvedPlanId
        ? await deps.artifacts.getPlan(session.id, workflow.approvedPlanId)
        : undefined;
      const answer = answerFromPlan(request, approvedPlanOf(planRecord));
      await recordEvent(deps, session.id, 'change.answered', {
        actor: message.userId,
        summary: answer.matched ? `Answered with plan step ${answer.step.id}` : answer.reason,
        data: { matched: answer.matched, ...(answer.matched ? { step: answer.step.id, safety: answer.safety } : {}) },
      });
      await reply(answer.message, warning);
      return { action: 'none', reason: 'answered from plan' };
    }
    case 'HYPOTHESIS_RECORDED': {
      const hypothesis = chosen ?? workflow.hypotheses.find((h) => h.rank === request.hypothesisRank);
      const envelope = await deps.artifacts.getEnvelope(session.id);
      const evidence = evidenceFromHypothesis(request, {
        at,
        ...(envelope ? { rootCause: envelope.rootCause } : {}),
        nextActions: (hypothesis?.reads ?? []).map((r) => ({ command: r.title, type: 'read-only' as const })),
      });
      const progress = await addEvidence(deps, session.id, evidence, (w) => ({
        ...w,
        hypotheses: w.hypotheses.map((h) => (h.id === hypothesis?.id ? { ...h, status: 'testing' as const } : h)),
        ...(hypothesis ? { activeHypothesisId: hypothesis.id } : {}),
      }));
      if (!hypothesis) {
        await reply(
          'Hypothesis noted. Test it with a read (for example `kubectl describe …`), then reply `confirmed` if it holds.',
          warning,
        );
        return { action: 'none', reason: 'free-text hypothesis' };
      }
      if (progress.session.state !== 'TESTING') {
        await forceState(
          deps,
          session.id,
          'TESTING',
          'evidence',
          `Hypothesis #${hypothesis.rank} ${hypothesis.code} chosen: testing it with ${hypothesis.reads.length} targeted read(s)`,
        );
      }
      return {
        action: 'test',
        hypothesis: {
          id: hypothesis.id,
          code: hypothesis.code,
          summary: hypothesis.summary,
          cluster,
          reads: hypothesis.reads,
        },
      };
    }
    case 'ROOT_CAUSE_CONFIRMED': {
      const evidence = evidenceFromConfirmation(request, currentEvidence(workflow), at, message.userId);
      const confirmed = evidence[0];
      const progress = await addEvidence(deps, session.id, evidence, (w) => ({
        ...w,
        hypotheses: w.hypotheses.map((h) =>
          h.id === w.activeHypothesisId ? { ...h, status: 'confirmed' as const } : h,
        ),
      }));
      const seq = progress.workflow.reviewSeq + 1;
      await forceState(
        deps,
        session.id,
        'RESOLVING',
        'evidence',
        `Root cause confirmed by ${message.userId}: ${confirmed?.description ?? request.raw}`.slice(0, 1000),
        (w) => ({ ...w, reviewSeq: seq }),
      );
      await reply(
        ':memo: Root cause confirmed. Drafting a remediation plan; it goes through review before anyone runs it.',
      );
      return { action: 'review', reviewSeq: seq };
    }
    case 'FIX_REPORTED': {
      // The evidence rules move the session back to GATHERING with what the fix must have removed; the state
      // machine then triages again and validate-fix judges the result.
      await addEvidence(deps, session.id, evidenceFromResolved(request, at, message.userId));
      await reply(
        `:mag: Validating the fix: running the *${session.intent}* checks on \`${session.namespace}\` again before the incident is closed.`,
      );
      return { action: 'resolved' };
    }
    case 'BREAK_GLASS_FORM':
      await postToSession(deps, session, breakGlassFormOffer(session.id, decision.guidance));
      return { action: 'none', reason: decision.code };
    case 'HANDOFF_PROPOSED': {
      const domain = request.handoffDomain;
      if (session.handoffCount >= MAX_HANDOFFS) {
        await postToSession(deps, session, handoffOutcomeView(session.id, domain ?? 'requested', 'limit'));
        return { action: 'none', reason: 'handoff limit' };
      }
      if (!domain || domain === 'platform') {
        await reply('Which specialist? I can consult the compute, storage or network specialist.');
        return { action: 'none', reason: 'no specialist domain' };
      }
      return {
        action: 'handoff',
        handoff: { domain, reason: `<@${message.userId}> asked for the ${domain} specialist.` },
      };
    }
    default: {
      if (message.kind === 'mention' || message.kind === 'button') {
        await reply(guidance(session.state, workflow), warning);
      }
      return { action: 'none', reason: 'conversation' };
    }
  }
}

export const RecordReadPayload = z.object({
  step: z.literal('record-read'),
  sessionId: SessionIdSchema,
  request: ReadSpecSchema.extend({ cluster: z.string() }),
  result: z.object({
    title: z.string(),
    outcome: z.enum(['ok', 'empty', 'failed']),
    summary: z.string(),
    lines: z.array(z.string()),
  }),
});

function requestFor(spec: z.infer<typeof ReadSpecSchema>): UserRequest {
  const verb = spec.verb === 'logs' ? 'logs' : spec.verb === 'events' ? 'events' : spec.name ? 'describe' : 'get';
  return {
    kind: 'read',
    toolClass: 'read',
    verb,
    resource: { kind: spec.kind, ...(spec.name ? { name: spec.name } : {}) },
    ...(spec.namespace ? { namespace: spec.namespace } : {}),
    allNamespaces: false,
    source: 'command',
    reasons: [],
    escalation: false,
    malformed: false,
    raw: spec.title,
  };
}

export async function recordRead(deps: WorkflowDeps, p: z.infer<typeof RecordReadPayload>) {
  const session = await deps.store.sessions.getRequired(p.sessionId);
  const at = deps.now().toISOString();
  const progress = await addEvidence(
    deps,
    p.sessionId,
    evidenceFromRead(
      requestFor(p.request),
      { outcome: p.result.outcome, summary: p.result.summary },
      { state: session.state, at },
    ),
  );
  await recordEvent(deps, p.sessionId, 'read.done', {
    summary: `${p.request.title}: ${p.result.summary}`.slice(0, 2000),
    data: { outcome: p.result.outcome, lines: p.result.lines.length },
  });
  const moved = progress.transitions.at(-1);
  await postToSession(
    deps,
    progress.session,
    readResultView({
      sessionId: p.sessionId,
      title: p.result.title,
      outcome: p.result.outcome,
      summary: p.result.summary,
      lines: p.result.lines,
      ...(moved ? { guidance: `Moved to ${moved.to}: ${moved.reason}` } : {}),
    }),
  );
  return { outcome: p.result.outcome };
}

export const RecordTestPayload = z.object({
  step: z.literal('record-test'),
  sessionId: SessionIdSchema,
  hypothesis: z.object({ id: z.string(), code: z.string(), summary: z.string() }).passthrough(),
  result: z.object({ hypothesisId: z.string(), results: z.array(RecordReadPayload.shape.result) }),
});

export async function recordTest(deps: WorkflowDeps, p: z.infer<typeof RecordTestPayload>) {
  const session = await deps.store.sessions.getRequired(p.sessionId);
  const workflow = await deps.artifacts.getOrCreateWorkflow(p.sessionId, deps.now());
  const hypothesis = workflow.hypotheses.find((h) => h.id === p.hypothesis.id);
  const at = deps.now().toISOString();
  const evidence = p.result.results.flatMap((r, i) => {
    const spec = hypothesis?.reads[i];
    return spec
      ? evidenceFromRead(requestFor(spec), { outcome: r.outcome, summary: r.summary }, { state: 'TESTING', at })
      : [];
  });
  const progress = await addEvidence(deps, p.sessionId, evidence);
  await recordEvent(deps, p.sessionId, 'hypothesis.tested', {
    summary: `${p.hypothesis.code}: ${p.result.results.map((r) => `${r.title} ${r.outcome}`).join('; ')}`.slice(
      0,
      2000,
    ),
    data: { hypothesisId: p.hypothesis.id, reads: p.result.results.length },
  });
  for (const r of p.result.results) {
    await postToSession(
      deps,
      session,
      readResultView({
        sessionId: p.sessionId,
        title: r.title,
        outcome: r.outcome,
        summary: r.summary,
        lines: r.lines,
        hypothesis: `${p.hypothesis.code}: ${p.hypothesis.summary}`,
      }),
    );
  }
  const others = progress.workflow.hypotheses.filter((h) => h.id !== p.hypothesis.id);
  await postToSession(
    deps,
    session,
    fitMessage(
      {
        text: `Does this confirm ${p.hypothesis.code}?`,
        blocks: [
          section(
            `Does this confirm *${p.hypothesis.code}*? Reply \`confirmed\` to move to a remediation plan, or test another hypothesis.`,
          ),
          ...hypothesisChoiceBlocks(p.sessionId, others),
          context(`State ${progress.session.state}`),
        ],
      },
      reportPointer(p.sessionId),
    ),
  );
  return { tested: p.result.results.length };
}
