import * as z from 'zod';
import type { ReadSpec } from '../../../cluster/read-spec.js';
import { READABLE_KINDS } from '../../../cluster/types.js';
import { isOverrideActive } from '../../../diagnosis/break-glass.js';
import { classifyCommandLine, classifyRequest, redactCredentials } from '../../../diagnosis/commands/index.js';
import { currentEvidence, type EvidenceItem } from '../../../diagnosis/evidence.js';
import { evidenceFigure, formatMissing, missingEvidence } from '../../../diagnosis/evidence-requirements.js';
import {
  evidenceFromConfirmation,
  evidenceFromHypothesis,
  evidenceFromResolved,
} from '../../../diagnosis/evidence-sources.js';
import { type GateDecision, gateRequest, isChangeRequest } from '../../../diagnosis/gate.js';
import { canonicalKind } from '../../../diagnosis/kinds.js';
import type { RecordedRequest, RequestGuidance } from '../../../diagnosis/panic.js';
import { bindQuestion } from '../../../diagnosis/question-bindings.js';
import { answerQuestion, explainCause, type QuestionAnswer, retriageAnswer } from '../../../diagnosis/questions.js';
import type { UserRequest } from '../../../diagnosis/request.js';
import {
  type ApprovedPlan,
  answerFromPlan,
  answerUnderOverride,
  type PlanAnswer,
} from '../../../diagnosis/resolving.js';
import { STATE_MACHINE, type TransitionRules } from '../../../diagnosis/state-machine.js';
import { describeHold, type Hold, type TransitionResult, walkTo } from '../../../diagnosis/transitions.js';
import { KubeName } from '../../../limits.js';
import type { RemediationPlan } from '../../../review/plan.js';
import { type PlanProgress, type PlanStepMatch, planStepOf } from '../../../review/plan-progress.js';
import type { InboxMessage } from '../../../store/inbox.js';
import type { SessionRecord } from '../../../store/sessions.js';
import type { Hypothesis, WorkflowRecord } from '../../../store/workflow-records.js';
import type { Domain, TriageEnvelope } from '../../../triage/envelope/index.js';
import { code } from '../../../views/limits.js';
import { stateEnteredAt } from '../../progress.js';
import { checkReadScope, type ReadScope, type ScopeDecision } from '../../read-scope.js';
import { readSpecFromRequest } from '../../reads.js';
import { planTypedRead, typedCommandLine } from '../../typed-read.js';
import type { NamespaceAnswer } from '../locate-steps.js';

/**
 * The route step's decision, and nothing else: what one thread input means for the session, from the session, its
 * workflow record, the input and what was loaded for it (the envelope, the approved plan, the read scope). No I/O,
 * so every branch is a unit test; `answers.ts` carries each decision out.
 */

const ActionSchema = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('hypothesis'), hypothesisId: z.string() }),
    z.object({ type: z.literal('resolved') }),
    z.object({ type: z.literal('break-glass'), requestId: z.string() }),
    z.object({ type: z.literal('namespace'), namespace: KubeName }),
    z.object({ type: z.literal('handoff'), approvalId: z.string(), decision: z.enum(['approve', 'deny']) }),
  ])
  .optional();

const CLOSE = /^\s*(close|close (this )?session|cancel (this )?session|end (this )?session)\s*[.!]?\s*$/i;

/** The approved plan as the route needs it: its steps with what each needs (the review contract's steps). */
export interface LoadedPlan {
  id: string;
  title?: string;
  approvedBy?: string;
  steps: RemediationPlan['steps'];
}

export interface DecideContext {
  now: Date;
  rules: TransitionRules;
  envelope?: TriageEnvelope | undefined;
  plan?: LoadedPlan | undefined;
  readScope: ReadScope;
  /** Handoffs a session may have in all. */
  maxHandoffs: number;
}

/** How a request is remembered for the panic detector: what calmops proposed that it followed. */
interface Followed {
  guided: boolean;
  /** The approved plan's step, when the request was one (in order or not). */
  planStep?: PlanStepMatch;
  /** In RESOLVING: the change matches no step of the approved plan. */
  outOfPlan?: boolean;
}

interface Gated {
  request: UserRequest;
  gate: GateDecision;
  followed: Followed;
}

export type Decision =
  | { kind: 'break-glass'; requestId: string }
  | { kind: 'close' }
  | { kind: 'locate'; answer: NamespaceAnswer }
  | { kind: 'stale-hypothesis'; text: string }
  /** The answer to the open specialist proposal, from its buttons. */
  | { kind: 'handoff-decided'; approve: boolean; domain: Domain; approvalId: string }
  /** A change asked for while a specialist proposal is open: it waits for that answer, nothing else does. */
  | { kind: 'held'; domain: string }
  | (Gated & { kind: 'panic' })
  | (Gated & { kind: 'refuse' })
  /** A hypothesis (button or sentence) the transition rules do not let the session test yet. */
  | (Gated & { kind: 'hold'; hold: Hold; text: string })
  | (Gated & { kind: 'read'; spec: ReadSpec; facts: string[] })
  | (Gated & {
      kind: 'read-refused';
      spec: ReadSpec;
      scope: Extract<ScopeDecision, { allowed: false }>;
      facts: string[];
    })
  /** An answer from what calmops knows: an explanation, the findings that answer a question. */
  | (Gated & { kind: 'answer'; lines: string[] })
  | (Gated & { kind: 'memory' })
  | (Gated & { kind: 'inspect' })
  | (Gated & { kind: 'change'; answer: PlanAnswer })
  /** A change in RESOLVING that is no step of the approved plan: refused with the plan's changes, never a panic. */
  | (Gated & { kind: 'off-plan'; answer: PlanAnswer })
  | (Gated & {
      kind: 'hypothesis';
      hypothesis?: Hypothesis;
      evidence: EvidenceItem[];
      /** The transitions recording it makes: each state on the way to TESTING. */
      walk: TransitionResult[];
    })
  | (Gated & { kind: 'confirm'; evidence: EvidenceItem[] })
  | (Gated & { kind: 'fix'; evidence: EvidenceItem[] })
  | (Gated & { kind: 'break-glass-form' })
  | (Gated & { kind: 'handoff'; domain: Domain })
  | (Gated & { kind: 'handoff-limit'; domain: string })
  | (Gated & { kind: 'handoff-which' })
  /** A specialist asked for while a proposal is open: the buttons above answer it. */
  | (Gated & { kind: 'handoff-open'; domain: string })
  /** Chat addressed to calmops (a mention, a button): where the session stands and what to do next. */
  | (Gated & { kind: 'guide'; text: string })
  /** People talking to each other in the thread. */
  | (Gated & { kind: 'silent' });

export type DecisionKind = Decision['kind'];
export type GatedDecision = Extract<Decision, Gated>;

export function isGated(decision: Decision): decision is GatedDecision {
  return 'gate' in decision;
}

const normalize = (text: string) =>
  text
    .toLowerCase()
    .replace(/[“”"'`?!.]/g, '')
    .replace(/\s+/g, ' ')
    .trim();

/** The objects calmops' own read suggestions name: the envelope's next actions and the hypotheses' reads. */
function suggestedTargets(envelope: TriageEnvelope | undefined, hypotheses: readonly Hypothesis[]) {
  const targets: Array<{ kind: string; name?: string }> = [];
  for (const action of envelope?.nextActions ?? []) {
    if (action.type !== 'read-only') continue;
    const parsed = classifyCommandLine(action.command);
    if (parsed?.kind === 'read' && parsed.resource) {
      targets.push({
        kind: canonicalKind(parsed.resource.kind),
        ...(parsed.resource.name ? { name: parsed.resource.name } : {}),
      });
    }
  }
  for (const h of hypotheses) {
    for (const read of h.reads) {
      targets.push({
        kind: read.verb === 'logs' ? 'pods' : canonicalKind(read.kind),
        ...(read.name ? { name: read.name } : {}),
      });
    }
  }
  return targets;
}

/** Whether calmops proposed this request: one of its prompts, one of its reads, a handoff it offered. */
function isSuggested(request: UserRequest, envelope: TriageEnvelope | undefined, workflow: WorkflowRecord): boolean {
  const said = normalize(request.raw);
  if ((envelope?.promptSuggestions ?? []).some((p) => normalize(p) === said)) return true;
  if (request.kind === 'handoff') {
    return request.handoffDomain !== undefined && workflow.handoffDomainsProposed.includes(request.handoffDomain);
  }
  if (request.kind !== 'read' || !request.resource) return false;
  const kind = request.verb === 'logs' ? 'pods' : canonicalKind(request.resource.kind);
  const name = request.resource.name;
  return suggestedTargets(envelope, workflow.hypotheses).some(
    (t) => t.kind === kind && (t.name === undefined || name === undefined || t.name === name),
  );
}

/** The domains the incident points at: where it was routed, its findings, the specialists calmops proposed. */
function relatedDomains(envelope: TriageEnvelope | undefined, workflow: WorkflowRecord): Domain[] {
  const domains = new Set<string>(workflow.handoffDomainsProposed);
  if (envelope) {
    domains.add(envelope.routing.domain);
    for (const f of envelope.findings) domains.add(f.domain);
  }
  return [...domains] as Domain[];
}

function approvedPlanOf(plan: LoadedPlan): ApprovedPlan {
  return {
    id: plan.id,
    ...(plan.title ? { title: plan.title } : {}),
    ...(plan.approvedBy ? { approvedBy: plan.approvedBy } : {}),
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

/** Whether the steps a plan step needs were answered before it. */
function needsDone(plan: LoadedPlan, stepIndex: number, progress: PlanProgress | undefined): boolean {
  const completed = progress?.planId === plan.id ? progress.completed : [];
  const step = plan.steps[stepIndex];
  return (step?.needs ?? []).every((id) => completed.includes(plan.steps.findIndex((s) => s.id === id)));
}

function followedOf(
  session: SessionRecord,
  request: UserRequest,
  context: DecideContext,
  workflow: WorkflowRecord,
): { followed: Followed; guidance: RequestGuidance; planAnswer?: PlanAnswer } {
  const progress = (workflow.planProgress ?? undefined) as PlanProgress | undefined;
  let planStep =
    context.plan && request.source === 'command' && ['read', 'write', 'dangerous'].includes(request.kind)
      ? planStepOf(context.plan, request.raw, progress)
      : undefined;
  // In RESOLVING a change is one of the plan's steps, typed or said ("restart it"), or it is refused.
  let planAnswer: PlanAnswer | undefined;
  if (context.plan && session.state === 'RESOLVING' && isChangeRequest(request)) {
    planAnswer = answerFromPlan(request, approvedPlanOf(context.plan), planStep ? { stepId: planStep.stepId } : {});
    if (planAnswer.matched && !planStep) {
      const stepId = planAnswer.step.id;
      const stepIndex = context.plan.steps.findIndex((s) => s.id === stepId);
      planStep = { stepIndex, stepId, inOrder: needsDone(context.plan, stepIndex, progress) };
    }
  }
  // Under an override that names its change, that change (or a plan step) is what may be asked for.
  const override = workflow.override;
  if (override?.change && isOverrideActive(override, context.now) && isChangeRequest(request)) {
    planAnswer = answerUnderOverride(request, override, planAnswer);
  }
  const outOfPlan = planAnswer !== undefined && !planAnswer.matched;
  const guided = isSuggested(request, context.envelope, workflow);
  return {
    followed: { guided, ...(planStep ? { planStep } : {}), ...(outOfPlan ? { outOfPlan } : {}) },
    guidance: {
      suggested: guided,
      ...(planStep ? { planStep: { stepIndex: planStep.stepIndex, inOrder: planStep.inOrder } } : {}),
      ...(outOfPlan ? { outOfPlan } : {}),
      relatedDomains: relatedDomains(context.envelope, workflow),
    },
    ...(planAnswer ? { planAnswer } : {}),
  };
}

/** The requests the panic detector has seen, as stored. */
function recordedRequests(workflow: WorkflowRecord): RecordedRequest[] {
  return workflow.recentRequests.map((r) => ({
    request: r.request as unknown as UserRequest,
    at: r.at,
    ...(r.guided ? { guided: true } : {}),
    ...(r.planStep !== undefined ? { planStep: r.planStep } : {}),
    ...(r.outOfPlan ? { outOfPlan: true } : {}),
  }));
}

/**
 * Where a session stands, said without presuming what the person asked for: ADR-005's "… before making changes"
 * answers a change, and stays with the gate's refusal of one.
 */
const STANDING: Readonly<Record<SessionRecord['state'], string>> = {
  GATHERING: 'The session is gathering evidence about what is happening.',
  ANALYZING: 'The session is comparing the evidence with past incidents.',
  HYPOTHESIZING: 'The session is forming a theory about the cause.',
  TESTING: 'The session is testing a theory with targeted reads.',
  RESOLVING: STATE_MACHINE.RESOLVING.guidance,
};

/** Where the session stands, in one line a person can act on. */
export function guidanceText(session: SessionRecord, workflow: WorkflowRecord): string {
  const gaps = missingEvidence(session.state, currentEvidence(workflow));
  const figure = evidenceFigure(workflow.evidence);
  const evidence = figure
    ? ` Evidence ${Math.round(figure.value * 100)}% (needs ${Math.round(figure.threshold * 100)}%).`
    : '';
  return `${STANDING[session.state]}${gaps.length > 0 ? ` Still needed: ${formatMissing(gaps)}.` : ''}${evidence}`;
}

function readSpecOf(target: NonNullable<QuestionAnswer['read']>): ReadSpec | undefined {
  if (
    target.verb !== 'logs' &&
    target.verb !== 'events' &&
    !(READABLE_KINDS as readonly string[]).includes(target.kind)
  ) {
    return undefined;
  }
  return {
    title: target.title.slice(0, 300),
    verb: target.verb,
    kind: target.kind,
    ...(target.name ? { name: target.name } : {}),
    ...(target.namespace ? { namespace: target.namespace } : {}),
    ...(target.previous ? { previous: true } : {}),
    ...(target.verb === 'logs' ? { tailLines: 50 } : {}),
  };
}

const CAN_READ =
  'I can read pods, events, logs, PVCs, PVs, StorageClasses, nodes, deployments, services, endpoints, ingresses, routes and configmaps. Name one, e.g. `kubectl get pods` or `kubectl logs <pod>`.';

function decideRead(base: Gated, session: SessionRecord, message: InboxMessage, context: DecideContext): Decision {
  const { request } = base;
  if (request.verb === 'search-memory') return { ...base, kind: 'memory' };
  if (request.verb === 'explain') {
    return { ...base, kind: 'answer', lines: explainCause(request.raw, context.envelope, session.namespace) };
  }
  if (request.verb === 'retriage') {
    return { ...base, kind: 'answer', lines: retriageAnswer(context.envelope, session.namespace, session.intent) };
  }
  // A kubectl read is answered as kubectl would answer it, within the session's scope.
  const line = request.source === 'command' ? typedCommandLine(redactCredentials(message.text)) : undefined;
  const plan =
    line === undefined ? undefined : planTypedRead(line, { namespace: session.namespace, scope: context.readScope });
  if (plan?.kind === 'refused') {
    if (plan.scope) {
      const spec: ReadSpec = {
        title: plan.title,
        verb: 'list',
        kind: plan.readKind ?? 'pods',
        ...(plan.namespace ? { namespace: plan.namespace.slice(0, 253) } : {}),
      };
      return { ...base, kind: 'read-refused', spec, scope: plan.scope, facts: [] };
    }
    return { ...base, kind: 'answer', lines: [`:no_entry: I did not run ${code(plan.title)}: ${plan.reason}.`] };
  }
  if (plan?.kind === 'read') return { ...base, kind: 'read', spec: plan.spec, facts: [] };
  // A question calmops offers (or one asked in the same words) is answered by the computation bound to it.
  const bound = request.source === 'command' ? undefined : bindQuestion(request.raw);
  if (bound) {
    const spec: ReadSpec = {
      title: request.raw.slice(0, 300),
      verb: 'list',
      kind: bound.kind,
      // The namespace the question is about, even when what answers it is cluster-wide (nodes for its pending pods).
      namespace: session.namespace,
      question: bound.id,
      ...(bound.windowMinutes ? { windowMinutes: bound.windowMinutes } : {}),
    };
    const facts = answerQuestion(request, context.envelope, session.namespace).facts.slice(0, 2);
    const scope = checkReadScope(spec, context.readScope, {});
    if (!scope.allowed) return { ...base, kind: 'read-refused', spec, scope, facts };
    return { ...base, kind: 'read', spec, facts };
  }
  // Words, and commands that leave out what to read, are aimed at the incident.
  const typed = request.source === 'command' ? readSpecFromRequest(request, session.namespace) : undefined;
  const question = typed ? undefined : answerQuestion(request, context.envelope, session.namespace);
  const spec = typed ?? (question?.read ? readSpecOf(question.read) : undefined);
  const facts = question?.facts ?? [];
  if (!spec) {
    if (facts.length > 0) return { ...base, kind: 'answer', lines: facts };
    if (message.kind === 'message' && request.source === 'natural-language' && !request.resource) {
      return { ...base, kind: 'silent' };
    }
    return { ...base, kind: 'answer', lines: [CAN_READ] };
  }
  const scope = checkReadScope(spec, context.readScope, { allNamespaces: request.allNamespaces });
  if (!scope.allowed) {
    // What the triage already read there still answers: it reads with the cluster reader's own reach.
    return { ...base, kind: 'read-refused', spec, scope, facts };
  }
  return { ...base, kind: 'read', spec, facts };
}

function decideHypothesis(
  base: Gated,
  session: SessionRecord,
  workflow: WorkflowRecord,
  context: DecideContext,
  chosen: Hypothesis | undefined,
): Decision {
  const { request } = base;
  const at = context.now.toISOString();
  const hypothesis = chosen ?? workflow.hypotheses.find((h) => h.rank === request.hypothesisRank);
  const evidence = evidenceFromHypothesis(request, {
    at,
    ...(context.envelope ? { rootCause: context.envelope.rootCause } : {}),
    nextActions: (hypothesis?.reads ?? []).map((r) => ({ command: r.title, type: 'read-only' as const })),
  });
  if (evidence.length === 0) {
    const ranks = workflow.hypotheses.map((h) => h.rank);
    return {
      kind: 'stale-hypothesis',
      text: `There is no hypothesis #${request.hypothesisRank ?? '?'}${ranks.length > 0 ? `; the list has ${ranks.map((r) => `#${r}`).join(', ')}` : ''}. ${guidanceText(session, workflow)}`,
    };
  }
  const walk = walkTo(
    {
      state: session.state,
      evidence: workflow.evidence,
      stateEnteredAt: stateEnteredAt(session, workflow),
      validation: workflow.validation,
      cycleStartedAt: workflow.cycleStartedAt,
    },
    evidence,
    'TESTING',
    at,
    context.rules,
  );
  if (!walk.reached) {
    const what = hypothesis ? `Testing hypothesis #${hypothesis.rank} ${hypothesis.code}` : 'Testing a hypothesis';
    if (walk.hold.state === 'RESOLVING') {
      // RESOLVING leads only back to GATHERING (ADR-005): a new theory comes after the fix was tried and judged.
      return {
        ...base,
        kind: 'hold',
        hold: walk.hold,
        text: `${what} would reopen a diagnosis whose plan is approved. Reply \`resolved\` once the fix is applied: the fresh triage that judges it takes the session back to ANALYZING if the fault is still there.`,
      };
    }
    return {
      ...base,
      kind: 'hold',
      hold: walk.hold,
      text: `${what} waits until the session reaches TESTING; it stops at ${walk.hold.state}. ${describeHold(walk.hold)}.`,
    };
  }
  return { ...base, kind: 'hypothesis', ...(hypothesis ? { hypothesis } : {}), evidence, walk: walk.steps };
}

/** What one thread input means for the session. */
type Action = z.infer<typeof ActionSchema>;

/** Buttons and words decided before the request is read: break-glass, a handoff decision, close, the namespace. */
function decideUngated(
  session: SessionRecord,
  workflow: WorkflowRecord,
  message: InboxMessage,
  action: Action | undefined,
): Decision | undefined {
  if (action?.type === 'break-glass') return { kind: 'break-glass', requestId: action.requestId };
  if (action?.type === 'handoff') {
    const open = workflow.pendingHandoff;
    if (open?.approvalId !== action.approvalId) {
      return { kind: 'stale-hypothesis', text: 'That specialist proposal is no longer open; nothing was changed.' };
    }
    return {
      kind: 'handoff-decided',
      approve: action.decision === 'approve',
      domain: open.domain as Domain,
      approvalId: open.approvalId,
    };
  }
  if (CLOSE.test(message.text) && !action) return { kind: 'close' };
  if (action?.type === 'namespace') return { kind: 'locate', answer: { from: 'button', namespace: action.namespace } };
  if (session.namespace === '') return { kind: 'locate', answer: { from: 'message' } };
  return undefined;
}

/** What the person asks: a hypothesis picked with its button, a fix reported with its button, or the message's words. */
function requestOf(
  session: SessionRecord,
  workflow: WorkflowRecord,
  message: InboxMessage,
  action: Action | undefined,
): { request: UserRequest; chosen: Hypothesis | undefined } | Decision {
  let request: UserRequest;
  let chosen: Hypothesis | undefined;
  if (action?.type === 'hypothesis') {
    chosen = workflow.hypotheses.find((h) => h.id === action.hypothesisId);
    if (!chosen) {
      return {
        kind: 'stale-hypothesis',
        text: `That hypothesis is no longer on the list. ${guidanceText(session, workflow)}`,
      };
    }
    request = classifyRequest(`hypothesis ${chosen.rank}`);
  } else if (action?.type === 'resolved') {
    request = classifyRequest('resolved');
  } else {
    request = classifyRequest(message.text);
  }
  return { request, chosen };
}

/** An allowed change: the plan's answer to it, or the override's when one is granted. */
function decideChange(
  base: Gated,
  workflow: WorkflowRecord,
  context: DecideContext,
  planAnswer: PlanAnswer | undefined,
): Decision {
  const { request, gate, followed } = base;
  const fromPlan =
    planAnswer ??
    answerFromPlan(
      request,
      context.plan ? approvedPlanOf(context.plan) : undefined,
      followed.planStep ? { stepId: followed.planStep.stepId } : {},
    );
  // Under a granted override the change it names is unlocked, plan or no plan.
  const answer =
    gate.overrideActive && workflow.override
      ? answerUnderOverride(request, workflow.override, context.plan ? fromPlan : undefined)
      : fromPlan;
  return { ...base, kind: 'change', answer };
}

/** Chat addressed to calmops gets where the session stands; people talking to each other get no reply. */
function decideChat(base: Gated, session: SessionRecord, workflow: WorkflowRecord, message: InboxMessage): Decision {
  const { request } = base;
  const addressed =
    message.kind === 'mention' || message.kind === 'button' || request.verb !== 'chat' || /\?\s*$/.test(message.text);
  if (!addressed) return { ...base, kind: 'silent' };
  const buttons =
    request.verb === 'approve' || request.verb === 'affirm' || request.verb === 'decline'
      ? 'Decisions (a plan review, a handoff, a break-glass request) are made with the buttons on the request, by the people it names. '
      : '';
  return { ...base, kind: 'guide', text: `${buttons}${guidanceText(session, workflow)}` };
}

export function decide(
  session: SessionRecord,
  workflow: WorkflowRecord,
  message: InboxMessage,
  context: DecideContext,
): Decision {
  const parsed = ActionSchema.safeParse(message.data?.['action']);
  const action = parsed.success ? parsed.data : undefined;
  const ungated = decideUngated(session, workflow, message, action);
  if (ungated) return ungated;

  const asked = requestOf(session, workflow, message, action);
  if ('kind' in asked) return asked;
  const { request, chosen } = asked;

  if (workflow.pendingHandoff && isChangeRequest(request))
    return { kind: 'held', domain: workflow.pendingHandoff.domain };
  const { followed, guidance, planAnswer } = followedOf(session, request, context, workflow);
  const gate = gateRequest(
    {
      state: session.state,
      evidence: workflow.evidence,
      override: workflow.override,
      recentRequests: recordedRequests(workflow),
      panicHistory: workflow.panicHistory,
      cycleStartedAt: workflow.cycleStartedAt,
      guidance,
    },
    request,
    context.now,
  );
  const base: Gated = { request, gate, followed };
  if (gate.code === 'BLOCKED_BY_PANIC' && gate.intervention) return { ...base, kind: 'panic' };
  if (gate.code === 'CHANGE_OUT_OF_PLAN' && planAnswer) return { ...base, kind: 'off-plan', answer: planAnswer };
  if (!gate.allowed) return { ...base, kind: 'refuse' };

  switch (gate.code) {
    case 'READ_ALLOWED':
      return decideRead(base, session, message, context);
    case 'INSPECT_ALLOWED':
      return { ...base, kind: 'inspect' };
    case 'CHANGE_ALLOWED':
      return decideChange(base, workflow, context, planAnswer);
    case 'HYPOTHESIS_RECORDED':
      return decideHypothesis(base, session, workflow, context, chosen);
    case 'ROOT_CAUSE_CONFIRMED':
      return {
        ...base,
        kind: 'confirm',
        evidence: evidenceFromConfirmation(request, currentEvidence(workflow), context.now.toISOString()),
      };
    case 'FIX_REPORTED':
      return {
        ...base,
        kind: 'fix',
        evidence: evidenceFromResolved(request, context.now.toISOString()),
      };
    case 'BREAK_GLASS_FORM':
      return { ...base, kind: 'break-glass-form' };
    case 'HANDOFF_PROPOSED': {
      const domain = request.handoffDomain;
      if (workflow.pendingHandoff) return { ...base, kind: 'handoff-open', domain: workflow.pendingHandoff.domain };
      if (session.handoffCount >= context.maxHandoffs) {
        return { ...base, kind: 'handoff-limit', domain: domain ?? 'requested' };
      }
      return domain ? { ...base, kind: 'handoff', domain } : { ...base, kind: 'handoff-which' };
    }
    default:
      return decideChat(base, session, workflow, message);
  }
}
