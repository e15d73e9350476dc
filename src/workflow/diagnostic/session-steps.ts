import * as z from 'zod';
import { groupFindings } from '../../diagnosis/blackboard.js';
import type { EvidenceItem } from '../../diagnosis/evidence.js';
import { evidenceFromEnvelope, evidenceFromMemorySearch } from '../../diagnosis/evidence-sources.js';
import { EVIDENCE_PER_FINDING, ID_MAX, MAX_HANDOFFS, SessionId, SUMMARY_MAX } from '../../limits.js';
import { resolutionFromSession } from '../../memory/resolution.js';
import type { RemediationPlan } from '../../review/plan.js';
import { rankingEffect } from '../../specialists/index.js';
import type { SharedFindingInput } from '../../store/blackboard.js';
import { incidentFromResolution, MemoryAlreadyStoredError } from '../../store/memory.js';
import {
  DomainSchema,
  SEVERITY_ORDER,
  type TriageEnvelope,
  TriageEnvelopeSchema,
} from '../../triage/envelope/index.js';
import { envelopeView } from '../../views/envelope.js';
import { failureView, timeoutNoticeView } from '../../views/failure.js';
import { findingsReportView } from '../../views/findings-report.js';
import { handoffOutcomeView, specialistName } from '../../views/handoff.js';
import { replyView } from '../../views/intervention.js';
import { similarIncidentsView } from '../../views/similar.js';
import { DecisionSchema } from '../api.js';
import { expireApproval, postToSession } from '../common.js';
import type { WorkflowDeps } from '../deps.js';
import { recordEvent } from '../events.js';
import { addEvidence } from '../progress.js';
import { hypothesesFromCauses } from '../reads.js';
import { resumeSession } from '../session-lifecycle.js';
import type { SpecialistResult } from './cluster-steps.js';

const SPECIALISTS = ['compute', 'storage', 'networking'] as const;

const S = { sessionId: SessionId };

export const ResumePayload = z.object({ step: z.literal('resume'), ...S, resume: z.number().int().min(1) });
export const EvaluatePayload = z.object({ step: z.literal('evaluate'), ...S, envelope: z.unknown() });
export const MemorySearchPayload = z.object({ step: z.literal('memory-search'), ...S });
export const IdleTimeoutPayload = z.object({ step: z.literal('idle-timeout'), ...S, execution: z.string().optional() });
export const ClosePayload = z.object({ step: z.literal('close'), ...S, reason: z.string().max(ID_MAX) });
export const NotifyFailurePayload = z.object({
  step: z.literal('notify-failure'),
  ...S,
  failure: z.object({ Error: z.string().optional(), Cause: z.string().optional() }).passthrough().optional(),
  execution: z.string().optional(),
});
export const TimeoutNoticePayload = z.object({ step: z.literal('timeout-notice'), ...S, kind: z.string().max(ID_MAX) });
export const HandoffDeniedPayload = z.object({
  step: z.literal('handoff-denied'),
  ...S,
  domain: DomainSchema,
  decision: DecisionSchema,
});
export const BlackboardPayload = z.object({
  step: z.literal('blackboard'),
  ...S,
  domain: DomainSchema,
  result: z
    .object({ findings: z.array(z.record(z.string(), z.unknown())), templates: z.array(z.string()) })
    .passthrough(),
});
export const StoreMemoryPayload = z.object({
  step: z.literal('store-memory'),
  ...S,
  /** The validate-fix result that let the incident close. */
  validation: z
    .object({ passed: z.boolean(), reason: z.string().min(1), attempts: z.number().int().min(1) })
    .passthrough()
    .optional(),
});

/**
 * A new execution of an open session. A session whose triage never reached the thread (its execution died during the
 * reads) gathers again; any other carries on from its stored state.
 */
export async function resume(deps: WorkflowDeps, p: z.infer<typeof ResumePayload>) {
  const session = await deps.store.sessions.getRequired(p.sessionId);
  const gathered = (await deps.artifacts.envelopePostedTs(p.sessionId)) !== undefined;
  await postToSession(
    deps,
    session,
    replyView(
      session.id,
      gathered
        ? `:arrows_counterclockwise: Picking this session up again (state *${session.state}*, evidence kept).`
        : ':arrows_counterclockwise: The triage was interrupted before it reported; reading the cluster again.',
    ),
  );
  return { state: session.state, gathered };
}

type Ref = { kind: string; name: string; namespace?: string | undefined };
const refKey = (r: Ref) => `${r.kind}/${r.namespace ?? ''}/${r.name}`;

/**
 * The handoff the findings suggest: another specialist domain than the intent's, not proposed before, for a finding
 * of medium severity or more. A finding on
 * the top cause's own chain (the Pod that waits for the unbound claim) is that cause's effect, not another
 * domain's problem, so it proposes nobody.
 */
function proposeHandoff(envelope: TriageEnvelope, proposed: readonly string[], handoffs: number) {
  if (handoffs >= MAX_HANDOFFS) return undefined;
  const top = envelope.rootCause[0];
  const effects = new Set((top ? [top.resource, ...(top.chain ?? [])] : []).map(refKey));
  for (const finding of envelope.findings) {
    const domain = finding.domain;
    if (domain === envelope.routing.domain || !(SPECIALISTS as readonly string[]).includes(domain)) continue;
    if (proposed.includes(domain)) continue;
    if (effects.has(refKey(finding.resource))) continue;
    // Only evidence that asks for a specialist proposes one: an old eviction or a low-severity note in a healthy
    // namespace is reported in the envelope, not escalated.
    if (SEVERITY_ORDER[finding.severity] < SEVERITY_ORDER.medium) continue;
    const count = envelope.findings.filter((f) => f.domain === domain).length;
    return {
      domain,
      // Nobody asked: calmops proposes it. The field is always there because the state machine passes it on.
      askedBy: '',
      reason:
        `${count} finding(s) point outside ${envelope.routing.domain}, e.g. ${finding.code} on ${finding.resource.kind} ${finding.resource.name}: ${finding.message}`.slice(
          0,
          500,
        ),
    };
  }
  return undefined;
}

/**
 * The envelope settles what the session is about: where it was located (a session started without a namespace keeps
 * the one the triage found) and the intent the evidence points to (a sweep takes its top cause's intent), so later
 * steps (validation, plans, specialists) work on what was found rather than on the first words.
 */
async function adoptRouting(deps: WorkflowDeps, sessionId: string, envelope: TriageEnvelope) {
  let session = await deps.store.sessions.getRequired(sessionId);
  if (session.namespace === '') {
    const settled = await deps.store.sessions.settleNamespace(sessionId, envelope.routing.namespace, deps.now());
    session = settled.session;
    if (settled.settled) {
      await recordEvent(deps, sessionId, 'namespace.located', {
        summary: envelope.routing.why.slice(0, SUMMARY_MAX),
        data: { namespace: envelope.routing.namespace },
      });
    }
  }
  const intent = envelope.routing.intent;
  if (session.intent !== intent && deps.templates.get(intent) !== undefined) {
    const from = session.intent;
    session = await deps.store.sessions.mutate(sessionId, () => ({ intent }), { now: deps.now });
    await recordEvent(deps, sessionId, 'intent.adopted', {
      summary: `${from} → ${intent}: the evidence points there`,
      data: { from, intent },
    });
  }
  return session;
}

export async function evaluate(deps: WorkflowDeps, p: z.infer<typeof EvaluatePayload>) {
  const envelope = TriageEnvelopeSchema.parse(p.envelope);
  const at = deps.now().toISOString();
  // A re-run after a crash between the post and the step's end must not post the envelope twice.
  const postedTs = await deps.artifacts.envelopePostedTs(p.sessionId);
  await deps.artifacts.putEnvelope(p.sessionId, envelope, deps.now());
  if (postedTs !== undefined) await deps.artifacts.markEnvelopePosted(p.sessionId, postedTs);
  await recordEvent(deps, p.sessionId, 'discovery_done', {
    summary: envelope.summary.slice(0, SUMMARY_MAX),
    data: {
      intent: envelope.routing.intent,
      findings: envelope.findings.length,
      completeness: envelope.evidence.completeness,
      rootCause: envelope.rootCause[0]?.code ?? null,
      durationMs: envelope.execution.durationMs,
    },
  });
  const existing = await deps.store.blackboard.getSharedContext(p.sessionId);
  const known = new Set(existing.map((f) => `${f.code}/${f.resource?.kind}/${f.resource?.name}`));
  for (const f of envelope.findings) {
    if (known.has(`${f.code}/${f.resource.kind}/${f.resource.name}`)) continue;
    await shareFinding(deps, p.sessionId, f, {
      specialist: f.domain,
      evidence: f.evidence.slice(0, EVIDENCE_PER_FINDING).map((e) => e.slice(0, 1000)),
      recordedBy: 'triage',
    });
  }
  const session0 = await adoptRouting(deps, p.sessionId, envelope);
  const hypotheses = hypothesesFromCauses(envelope.rootCause, session0.namespace);
  let handoff: { domain: string; reason: string; askedBy: string } | undefined;
  const progress = await addEvidence(deps, p.sessionId, evidenceFromEnvelope(envelope, at), (w) => {
    handoff = proposeHandoff(envelope, w.handoffDomainsProposed, session0.handoffCount);
    return {
      ...w,
      hypotheses,
      handoffDomainsProposed: handoff ? [...w.handoffDomainsProposed, handoff.domain] : w.handoffDomainsProposed,
    };
  });
  if (postedTs === undefined) {
    const ts = await postToSession(
      deps,
      progress.session,
      envelopeView({ sessionId: p.sessionId, envelope, hypotheses }),
    );
    await deps.artifacts.markEnvelopePosted(p.sessionId, ts);
  }
  return {
    summary: {
      state: progress.session.state,
      completeness: envelope.evidence.completeness,
      findings: envelope.findings.length,
      rootCause: envelope.rootCause[0]?.code ?? null,
    },
    handoff: handoff ?? {},
  };
}

export async function memorySearch(deps: WorkflowDeps, p: z.infer<typeof MemorySearchPayload>) {
  const envelope = await deps.artifacts.getEnvelope(p.sessionId);
  const session = await deps.store.sessions.getRequired(p.sessionId);
  const matches = envelope ? await deps.memory.findSimilar(envelope, { limit: 3, excludeId: p.sessionId }) : [];
  const at = deps.now().toISOString();
  await addEvidence(
    deps,
    p.sessionId,
    evidenceFromMemorySearch(
      matches.map((m) => ({ id: m.incident.id, explanation: m.explanation })),
      at,
    ),
  );
  if (matches.length > 0) {
    await deps.store.sessions.mutate(
      p.sessionId,
      () => ({ memoryMatchIds: matches.map((m) => m.incident.id).slice(0, 20) }),
      { now: deps.now },
    );
  }
  await recordEvent(deps, p.sessionId, 'memory.searched', {
    summary: `${matches.length} similar incident(s)`,
    data: { matches: matches.map((m) => ({ id: m.incident.id, score: m.score })) },
  });
  await postToSession(
    deps,
    session,
    similarIncidentsView(
      p.sessionId,
      matches.map((m) => ({
        id: m.incident.id,
        title: m.incident.title,
        score: m.score,
        explanation: m.explanation,
        rootCause: m.incident.rootCause,
        resolutionSteps: m.incident.resolutionSteps,
        resolvedAt: m.incident.resolvedAt,
      })),
    ),
  );
  return { matches: matches.length };
}

export async function idleTimeout(deps: WorkflowDeps, p: z.infer<typeof IdleTimeoutPayload>) {
  const session = await deps.store.sessions.mutate(
    p.sessionId,
    (s) => (p.execution === undefined || s.executionArn === p.execution ? { executionArn: null } : {}),
    { now: deps.now },
  );
  const wait = await deps.store.waits.get(p.sessionId);
  if (wait && !wait.claimedAt) await deps.store.waits.remove(p.sessionId, wait.waitId);
  const hours = Math.round((deps.timeouts.idleTimeoutSeconds / 3600) * 10) / 10;
  await recordEvent(deps, p.sessionId, 'session.idle', {
    summary: `No input for ${deps.timeouts.idleTimeoutSeconds} s`,
  });
  await postToSession(
    deps,
    session,
    timeoutNoticeView(
      p.sessionId,
      `No activity here for ${hours >= 1 ? `${hours} h` : `${deps.timeouts.idleTimeoutSeconds} s`}: pausing this session.`,
      'Everything is kept. Send a message in this thread to pick it up where it stopped.',
    ),
  );
  // A message that arrived between the timeout and now found no waiting execution: start the next one for it.
  if (await deps.store.inbox.peekOldest(p.sessionId)) await resumeSession(deps, p.sessionId);
  return {};
}

export async function close(deps: WorkflowDeps, p: z.infer<typeof ClosePayload>) {
  const resolved = p.reason === 'resolved';
  const session = await deps.store.sessions.mutate(
    p.sessionId,
    (s) => (s.status === 'open' ? { status: resolved ? 'resolved' : 'closed', executionArn: null } : {}),
    { now: deps.now },
  );
  await recordEvent(deps, p.sessionId, 'session.closed', {
    summary: resolved ? 'Resolved' : 'Closed',
    data: { reason: p.reason },
  });
  await postToSession(
    deps,
    session,
    replyView(
      p.sessionId,
      resolved
        ? ':white_check_mark: Marked resolved. The incident is in operational memory for next time. Thanks, everyone.'
        : ':wave: Session closed.',
    ),
  );
  return {};
}

/** The error name and message behind a Catch, in words a person can act on. */
function describeFailure(failure: z.infer<typeof NotifyFailurePayload>['failure']): {
  step: string;
  error: string;
  detail?: string;
} {
  const error = failure?.Error ?? 'Unknown';
  let message = failure?.Cause ?? '';
  try {
    const parsed = JSON.parse(message) as { errorMessage?: string; errorType?: string };
    if (parsed.errorMessage) message = parsed.errorMessage;
  } catch {
    // Not JSON: keep the cause as it is.
  }
  const match = message.match(/^\[([a-z-]+)\]\s*(.*)$/s);
  const step = match?.[1] ?? (error === 'States.Timeout' ? 'a step that took too long' : 'a workflow step');
  return { step, error, ...(message ? { detail: (match?.[2] ?? message).slice(0, 500) } : {}) };
}

export async function notifyFailure(deps: WorkflowDeps, p: z.infer<typeof NotifyFailurePayload>) {
  const described = describeFailure(p.failure);
  const session = await deps.store.sessions.mutate(
    p.sessionId,
    (s) => (p.execution !== undefined && s.executionArn === p.execution ? { executionArn: null } : {}),
    { now: deps.now },
  );
  deps.logger.error('step failed', { sessionId: p.sessionId, ...described, execution: p.execution });
  await recordEvent(deps, p.sessionId, 'workflow.failed', {
    summary: `${described.step}: ${described.error}`,
    data: { ...described },
  });
  await postToSession(deps, session, failureView({ sessionId: p.sessionId, ...described }));
  return {};
}

export async function timeoutNotice(deps: WorkflowDeps, p: z.infer<typeof TimeoutNoticePayload>) {
  const session = await deps.store.sessions.getRequired(p.sessionId);
  await expireApproval(deps, session, p.kind);
  const pending = await deps.artifacts.getPending(p.sessionId, p.kind);
  const domain = pending
    ? ((await deps.store.approvals.get(pending.approvalId).catch(() => undefined))?.data?.['domain'] as
        | string
        | undefined)
    : undefined;
  await postToSession(deps, session, handoffOutcomeView(p.sessionId, domain ?? 'requested', 'expired'));
  return {};
}

export async function handoffDenied(deps: WorkflowDeps, p: z.infer<typeof HandoffDeniedPayload>) {
  const session = await deps.store.sessions.getRequired(p.sessionId);
  await recordEvent(deps, p.sessionId, 'handoff.denied', {
    actor: p.decision.userId ?? 'calmops',
    summary: `Handoff to ${p.domain} declined`,
    data: { domain: p.domain },
  });
  await postToSession(deps, session, handoffOutcomeView(p.sessionId, p.domain, 'denied', p.decision.userId));
  return {};
}

export async function blackboard(deps: WorkflowDeps, p: z.infer<typeof BlackboardPayload>) {
  const result = p.result as unknown as SpecialistResult;
  const existing = await deps.store.blackboard.getSharedContext(p.sessionId);
  const key = (
    code: string | undefined,
    r: { kind: string; name: string; namespace?: string | undefined } | undefined,
  ) => `${code}/${r?.kind}/${r?.namespace ?? ''}/${r?.name}`;
  const known = new Set(existing.map((f) => key(f.code, f.resource)));
  const at = deps.now().toISOString();
  let added = 0;
  const evidence: EvidenceItem[] = [];
  for (const f of result.findings) {
    if (known.has(key(f.code, f.resource))) continue;
    known.add(key(f.code, f.resource));
    await shareFinding(deps, p.sessionId, f, {
      specialist: p.domain,
      evidence: f.evidence,
      recordedBy: `${p.domain}-specialist`,
    });
    added++;
    evidence.push({
      id: `symptom:${f.code}:${f.resource.kind}/${f.resource.namespace ?? ''}/${f.resource.name}`,
      type: 'symptoms',
      description: `${f.code} on ${f.resource.kind} ${f.resource.name} (${p.domain} specialist): ${f.message}`.slice(
        0,
        SUMMARY_MAX,
      ),
      source: 'envelope',
      resource: f.resource,
      code: f.code,
      at,
    });
  }
  const envelope = await deps.artifacts.getEnvelope(p.sessionId);
  const top = envelope?.rootCause[0];
  const newFindings = result.findings.filter((f) =>
    evidence.some((e) => e.code === f.code && e.resource?.name === f.resource.name),
  );
  const ranking = rankingEffect(
    top,
    newFindings.map((f) => ({ ...f, analyzer: f.template })),
  );
  // One blackboard, one ranking: the report leads with the envelope's top cause unless the specialist's evidence
  // put another first, and then it says why.
  const lead = ranking.effect === 'changed' ? { code: ranking.to.code, resource: ranking.to.resource } : top;
  const all = await deps.store.blackboard.getSharedContext(p.sessionId);
  const groups = groupFindings(all, lead ? { lead: { code: lead.code, resource: lead.resource } } : {});
  const session = await deps.store.sessions.mutate(p.sessionId, (s) => ({ handoffCount: s.handoffCount + 1 }), {
    now: deps.now,
  });
  if (evidence.length > 0) await addEvidence(deps, p.sessionId, evidence);
  const checks = result.checks ?? [];
  await recordEvent(deps, p.sessionId, 'handoff.completed', {
    summary: `${specialistName(p.domain)} added ${added} finding(s) and checked ${checks.length} thing(s); ranking ${ranking.effect}`,
    data: {
      domain: p.domain,
      added,
      templates: result.templates,
      groups: groups.length,
      handoffs: session.handoffCount,
      checks: checks.length,
      ruledOut: checks.filter((c) => c.outcome === 'ruled-out').length,
      ranking: ranking.effect,
      ...(ranking.effect === 'changed' ? { lead: ranking.to.code } : {}),
      reads: result.reads ?? null,
    },
  });
  await postToSession(
    deps,
    session,
    findingsReportView({
      sessionId: p.sessionId,
      domain: p.domain,
      groups,
      added,
      newFindings,
      checks,
      ranking,
      ...(result.reads !== undefined && result.budget !== undefined
        ? { reads: result.reads, budget: result.budget }
        : {}),
    }),
  );
  return { added, groups: groups.length, ranking: ranking.effect };
}

export async function storeMemory(deps: WorkflowDeps, p: z.infer<typeof StoreMemoryPayload>) {
  const session = await deps.store.sessions.getRequired(p.sessionId);
  const envelope = await deps.artifacts.getEnvelope(p.sessionId);
  const workflow = await deps.artifacts.getOrCreateWorkflow(p.sessionId, deps.now());
  if (!envelope) {
    await recordEvent(deps, p.sessionId, 'memory.skipped', { summary: 'No envelope: nothing to remember' });
    return { memoryId: null };
  }
  const confirmed = [...workflow.evidence].reverse().find((e) => e.type === 'confirmed_root_cause' && e.code);
  const cause = envelope.rootCause.find((c) => c.code === confirmed?.code) ?? envelope.rootCause[0];
  const rootCause = cause
    ? { code: cause.code, summary: cause.summary.slice(0, SUMMARY_MAX), resource: cause.resource }
    : { code: 'UNDETERMINED', summary: 'The root cause was not determined before the incident was resolved' };
  const planRecord = workflow.approvedPlanId
    ? await deps.artifacts.getPlan(p.sessionId, workflow.approvedPlanId)
    : undefined;
  const plan = planRecord?.plan as RemediationPlan | undefined;
  const fix = [...workflow.evidence].reverse().find((e) => e.type === 'fix_applied');
  // What was validated: the approved steps, and what people reported running after the approval.
  const steps = resolutionFromSession({
    ...(plan ? { steps: plan.steps } : {}),
    timeline: await deps.store.timeline.list(p.sessionId, { limit: 1000 }),
    ...(fix?.description ? { fixReport: fix.description } : {}),
  });
  const now = deps.now();
  const incident = incidentFromResolution({
    envelope: {
      ...envelope,
      routing: {
        ...envelope.routing,
        namespace: session.namespace,
        ...(session.cluster ? { cluster: session.cluster } : {}),
      },
    },
    rootCause,
    resolutionSteps: steps.slice(0, 30),
    resolvedBy: session.requester,
    startedAt: new Date(session.createdAt),
    resolvedAt: now,
    sessionId: p.sessionId,
    ...(p.validation
      ? {
          validation: {
            passed: p.validation.passed,
            reason: p.validation.reason.slice(0, SUMMARY_MAX),
            attempts: p.validation.attempts,
            at: now.toISOString(),
          },
        }
      : {}),
  });
  let memoryId = p.sessionId;
  try {
    memoryId = (await deps.memory.save(incident)).id;
  } catch (error) {
    if (!(error instanceof MemoryAlreadyStoredError)) throw error;
  }
  await recordEvent(deps, p.sessionId, 'memory.stored', {
    summary: `Stored as ${memoryId}`,
    data: {
      memoryId,
      rootCause: rootCause.code,
      ...(p.validation ? { validated: p.validation.passed, validationAttempts: p.validation.attempts } : {}),
    },
  });
  return { memoryId };
}

/** Puts a finding on the session's blackboard, with its summary and related objects cut to what the board keeps. */
async function shareFinding(
  deps: WorkflowDeps,
  sessionId: string,
  f: Pick<SharedFindingInput, 'confidence' | 'code' | 'severity' | 'resource'> & {
    message: string;
    related: NonNullable<SharedFindingInput['related']>;
  },
  by: Pick<SharedFindingInput, 'specialist' | 'evidence' | 'recordedBy'>,
): Promise<void> {
  await deps.store.blackboard.updateSharedContext(
    sessionId,
    {
      specialist: by.specialist,
      summary: f.message.slice(0, SUMMARY_MAX),
      confidence: f.confidence,
      code: f.code,
      severity: f.severity,
      resource: f.resource,
      related: f.related.slice(0, 20),
      evidence: by.evidence,
      recordedBy: by.recordedBy,
    },
    deps.now(),
  );
}
