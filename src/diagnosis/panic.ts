import * as z from 'zod';
import type { Domain } from '../triage/envelope/index.js';
import { type EvidenceItem, supportsTarget } from './evidence.js';
import type { UserRequest } from './request.js';
import type { DiagnosticState } from './state-machine.js';

/**
 * ADR-005's panic detector: five patterns of 4 AM troubleshooting, each with a severity. High and critical signals
 * block the request and force a calm look at the evidence (ANALYZING); low and medium ones warn. Every signal is
 * returned so the caller records it on the timeline.
 */

export const PANIC_TYPES = [
  'rapid_fire_commands',
  'bypassing_diagnostics',
  'jumping_between_domains',
  'escalating_permissions',
  'destructive_without_evidence',
] as const;
export const PanicTypeSchema = z.enum(PANIC_TYPES);
export type PanicType = z.infer<typeof PanicTypeSchema>;

export const PanicSeveritySchema = z.enum(['low', 'medium', 'high', 'critical']);
export type PanicSeverity = z.infer<typeof PanicSeveritySchema>;

export const PanicSignalSchema = z.object({
  type: PanicTypeSchema,
  severity: PanicSeveritySchema,
  at: z.iso.datetime({ offset: true }),
  description: z.string(),
  evidence: z.record(z.string(), z.unknown()),
});
export type PanicSignal = z.infer<typeof PanicSignalSchema>;

const PANIC_RULES = {
  rapidFireWindowMs: 30_000,
  rapidFireCount: 2,
  bypassMinEvidence: 3,
  domainWindowRequests: 5,
  domainCount: 3,
  escalationWindowMs: 15 * 60_000,
  escalationCount: 2,
  /** A warning ignored within this window comes back as a blocking signal. */
  repeatWindowMs: 10 * 60_000,
} as const;

/** A request the session has already seen, with when it arrived. */
export interface RecordedRequest {
  request: UserRequest;
  at: string;
  /** calmops proposed it (a read it suggested, a handoff it offered): following it is no jump between areas. */
  guided?: boolean;
  /** The approved plan's step it was, when it came in the plan's order: a person working through the plan. */
  planStep?: number;
  /** A change refused in RESOLVING because the approved plan has no such step: refused, so it rushed nothing. */
  outOfPlan?: boolean;
}

/**
 * What calmops itself proposed, as it bears on one request. ADR-005 warns about people who jump around or rush; a
 * person who does what calmops suggested, or runs the approved plan step after step, is doing neither.
 */
export interface RequestGuidance {
  /** A read calmops suggested (a next action, a hypothesis's test, a prompt it offered) or a handoff it offered. */
  suggested?: boolean;
  /** The step of the approved plan this request is, and whether the steps it needs came first. */
  planStep?: { stepIndex: number; inOrder: boolean };
  /** The change is none of the approved plan's steps, nor the change an active override was granted for. */
  outOfPlan?: boolean;
  /**
   * The domains the incident's own evidence and calmops' offers point at (the findings' domains, the handoffs it
   * proposed): reads across them are one investigation area, not several.
   */
  relatedDomains?: readonly Domain[];
}

export interface PanicContext {
  /** The state the gate judges by (an active override's target state). */
  state: DiagnosticState;
  evidence: readonly EvidenceItem[];
  recentRequests: readonly RecordedRequest[];
  panicHistory: readonly PanicSignal[];
  /** With an approved override, skipping diagnostics is the point: bypass and no-evidence signals stay quiet. */
  overrideActive: boolean;
  now: Date;
  guidance?: RequestGuidance;
}

/** Changes to the cluster: the requests a rapid-fire burst is made of. Exec and port-forward only look. */
function isRisky(request: UserRequest): boolean {
  return request.kind === 'write' || (request.kind === 'dangerous' && request.toolClass === 'destructive');
}

function within(recent: readonly RecordedRequest[], now: Date, windowMs: number): RecordedRequest[] {
  const floor = now.getTime() - windowMs;
  return recent.filter((r) => {
    const t = Date.parse(r.at);
    return t >= floor && t <= now.getTime();
  });
}

function brief(r: RecordedRequest): { at: string; kind: string; verb: string; raw: string } {
  return { at: r.at, kind: r.request.kind, verb: r.request.verb, raw: r.request.raw.slice(0, 200) };
}

/** A change that is the approved plan's next step: the plan is the evidence, the review was the pause. */
function isPlannedStep(guidance: RequestGuidance | undefined): boolean {
  return guidance?.planStep?.inOrder === true;
}

/** The request being judged, as it will be recorded, and what every signal reads about it. */
interface Judged {
  context: PanicContext;
  request: UserRequest;
  current: RecordedRequest;
  at: string;
  planned: boolean;
}

/** Several changes asked for in a short time. */
function rapidFire(judged: Judged): PanicSignal | undefined {
  const { context, request, current, at, planned } = judged;
  if (isRisky(request) && !planned) {
    // A planned step is never the burst's trigger, but an off-plan change right after one is still a rush.
    const burst = [...within(context.recentRequests, context.now, PANIC_RULES.rapidFireWindowMs), current].filter(
      (r) => isRisky(r.request) && r.outOfPlan !== true,
    );
    if (burst.length >= PANIC_RULES.rapidFireCount) {
      return {
        type: 'rapid_fire_commands',
        severity: 'high',
        at,
        description: `${burst.length} changes requested within ${PANIC_RULES.rapidFireWindowMs / 1000} seconds`,
        evidence: { requests: burst.map(brief) },
      };
    }
  }
  return undefined;
}

/** A change asked for before the problem is understood. */
function bypassingDiagnostics(judged: Judged): PanicSignal | undefined {
  const { context, request, current, at, planned } = judged;
  const isChange = request.kind === 'write' || (request.kind === 'dangerous' && request.toolClass === 'destructive');
  if (isChange && !context.overrideActive && !planned) {
    const early = context.state === 'GATHERING' || context.state === 'ANALYZING';
    const thin = context.evidence.length < PANIC_RULES.bypassMinEvidence;
    if (early || thin) {
      return {
        type: 'bypassing_diagnostics',
        severity: 'critical',
        at,
        description: `A change was requested in ${context.state} with ${context.evidence.length} evidence item(s), before the problem is understood`,
        evidence: { state: context.state, evidenceCount: context.evidence.length, request: brief(current) },
      };
    }
  }
  return undefined;
}

/** Reads and changes across unrelated areas with no hypothesis between them. */
function jumpingBetweenDomains(judged: Judged): PanicSignal | undefined {
  const { context, request, current, at } = judged;
  const guidance = context.guidance;
  const followed = (r: RecordedRequest) => r.guided === true || r.planStep !== undefined;
  if (
    request.domain &&
    !followed(current) &&
    (request.kind === 'read' || request.kind === 'write' || request.kind === 'dangerous')
  ) {
    const window = [...context.recentRequests, current].slice(-PANIC_RULES.domainWindowRequests);
    const lastHypothesis = window.map((r) => r.request.kind).lastIndexOf('hypothesis');
    const path = window.slice(lastHypothesis + 1).filter((r) => r.request.domain && !followed(r));
    const firstAt = path[0]?.at ?? at;
    const hypothesisSince = context.evidence.some((e) => e.type === 'hypothesis' && e.at >= firstAt);
    const related = new Set(guidance?.relatedDomains ?? []);
    const domains = [...new Set(path.map((r) => r.request.domain as Domain))];
    // Everything the incident itself points at is one area; only areas outside it add to the count.
    const areas = new Set(domains.map((d) => (related.has(d) ? 'incident' : d)));
    if (areas.size >= PANIC_RULES.domainCount && !hypothesisSince) {
      return {
        type: 'jumping_between_domains',
        severity: 'medium',
        at,
        description: `Investigation jumped across ${domains.join(', ')} without a hypothesis`,
        evidence: { domains, path: path.map(brief) },
      };
    }
  }
  return undefined;
}

/** Repeated asks for more permissions, or a change run as someone else. */
function escalatingPermissions(judged: Judged): PanicSignal | undefined {
  const { context, request, current, at } = judged;
  if (request.escalation || request.kind === 'break-glass') {
    const asks = [...within(context.recentRequests, context.now, PANIC_RULES.escalationWindowMs), current].filter(
      (r) => r.request.escalation || r.request.kind === 'break-glass',
    );
    // Running a change as someone else (`--as=system:admin`, sudo) is itself the escalation; asking for the
    // break-glass form once is not.
    const escalatingChange = request.escalation && isRisky(request) && !context.overrideActive;
    if (asks.length >= PANIC_RULES.escalationCount || escalatingChange) {
      return {
        type: 'escalating_permissions',
        severity: 'high',
        at,
        description: `${asks.length} requests for more permissions or an override within ${PANIC_RULES.escalationWindowMs / 60_000} minutes`,
        evidence: { requests: asks.map(brief) },
      };
    }
  }
  return undefined;
}

/** Destroying something no evidence is about. */
function destructiveWithoutEvidence(judged: Judged): PanicSignal | undefined {
  const { context, request, current, at, planned } = judged;
  // An impersonated or privileged command is judged as the escalation it is, not as destroying something unknown.
  if (
    request.kind === 'dangerous' &&
    request.toolClass === 'destructive' &&
    !request.escalation &&
    !context.overrideActive &&
    !planned
  ) {
    const target = request.resource;
    const wide = request.allNamespaces || request.reasons.some((r) => r.startsWith('--all'));
    const supported = !wide && target !== undefined && supportsTarget(context.evidence, target, request.namespace);
    if (!supported) {
      const what = target ? `${target.kind}${target.name ? `/${target.name}` : ''}` : 'an unnamed target';
      return {
        type: 'destructive_without_evidence',
        severity: 'critical',
        at,
        description: `A destructive request (${request.verb}) on ${what} with no evidence about that resource`,
        evidence: { target: target ?? null, namespace: request.namespace ?? null, request: brief(current) },
      };
    }
  }
  return undefined;
}

export function detectPanicSignals(context: PanicContext, request: UserRequest): PanicSignal[] {
  const at = context.now.toISOString();
  const guidance = context.guidance;
  const planned = isPlannedStep(guidance);
  const current: RecordedRequest = {
    request,
    at,
    ...(guidance?.suggested ? { guided: true } : {}),
    ...(planned && guidance?.planStep ? { planStep: guidance.planStep.stepIndex } : {}),
  };
  const signals: PanicSignal[] = [];

  const judged: Judged = { context, request, current, at, planned };
  for (const detect of [
    rapidFire,
    bypassingDiagnostics,
    jumpingBetweenDomains,
    escalatingPermissions,
    destructiveWithoutEvidence,
  ]) {
    const signal = detect(judged);
    if (signal) signals.push(signal);
  }

  // A warning that was ignored comes back stronger.
  const floor = context.now.getTime() - PANIC_RULES.repeatWindowMs;
  return signals.map((signal) => {
    if (signal.severity !== 'low' && signal.severity !== 'medium') return signal;
    const repeated = context.panicHistory.some((p) => p.type === signal.type && Date.parse(p.at) >= floor);
    return repeated
      ? { ...signal, severity: 'high', description: `${signal.description} (again, after a warning)` }
      : signal;
  });
}

function isBlocking(signal: PanicSignal): boolean {
  return signal.severity === 'high' || signal.severity === 'critical';
}

const SIGNAL_LINES: Record<PanicType, string> = {
  rapid_fire_commands: 'Moving too quickly between operations',
  bypassing_diagnostics: 'Trying to apply fixes before understanding the problem',
  jumping_between_domains: 'Jumping between different investigation areas',
  escalating_permissions: 'Reaching for more permissions than the diagnosis needs',
  destructive_without_evidence: 'About to destroy something we have no evidence about',
};

const RECOMMENDED_ACTIONS: readonly string[] = [
  "Take a deep breath - let's approach this methodically",
  "Review the evidence we've gathered so far",
  'Consider if we have enough information to understand the problem',
  'Look for similar incidents in our memory system',
];

/** ADR-005's calming message, one line per distinct pattern. */
function calmingMessage(signals: readonly PanicSignal[]): string {
  const types = [...new Set(signals.map((s) => s.type))];
  return [
    "🛑 Hold on - I'm detecting some concerning patterns in our troubleshooting approach.",
    '',
    'It looks like we might be:',
    ...types.map((t) => `• ${SIGNAL_LINES[t]}`),
    '',
    "Let's slow down and work through this systematically.",
    'The best way to solve complex problems is with methodical investigation.',
    '',
    "What symptoms are we seeing? Let's start there.",
  ].join('\n');
}

const CAUTION_MESSAGE = "I notice we might be moving quickly. Let's make sure we have enough evidence.";

export interface Intervention {
  blocked: boolean;
  message: string;
  recommendedActions: readonly string[];
  forcedState?: 'ANALYZING';
}

/** High or critical: block and force ANALYZING. Otherwise a caution that lets the request through. */
export function intervene(signals: readonly PanicSignal[]): Intervention | undefined {
  if (signals.length === 0) return undefined;
  if (signals.some(isBlocking)) {
    return {
      blocked: true,
      message: calmingMessage(signals),
      recommendedActions: RECOMMENDED_ACTIONS,
      forcedState: 'ANALYZING',
    };
  }
  return {
    blocked: false,
    message: [CAUTION_MESSAGE, ...signals.map((s) => `• ${SIGNAL_LINES[s.type]}: ${s.description}`)].join('\n'),
    recommendedActions: RECOMMENDED_ACTIONS.slice(1),
  };
}
