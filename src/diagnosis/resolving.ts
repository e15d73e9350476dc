import * as z from 'zod';
// Answers are Slack mrkdwn: what the person typed and what the plan quotes from the cluster are shown as text.
import { escapeText, mention } from '../mrkdwn/escape.js';
import { type SafetyLabel, SafetyLabelSchema } from '../triage/envelope/index.js';
import { classifyCommandLine } from './commands/index.js';
import { canonicalKind } from './kinds.js';
import type { UserRequest } from './request.js';

/**
 * RESOLVING never runs anything. A change request that passed the gate is matched against the approved plan and
 * answered with the plan's own command, its rollback and its safety label, for a human to run.
 */

const PlanStepSchema = z
  .object({
    id: z.string().min(1),
    command: z.string().min(1),
    mode: z.enum(['read', 'write']),
    rollback: z.string().optional(),
    description: z.string().optional(),
    safety: SafetyLabelSchema.optional(),
  })
  .refine((s) => s.mode === 'read' || Boolean(s.rollback?.trim()), { message: 'a write step needs a rollback' });
type PlanStep = z.infer<typeof PlanStepSchema>;

export const ApprovedPlanSchema = z.object({
  id: z.string().min(1),
  title: z.string().optional(),
  approvedBy: z.string().optional(),
  approvedAt: z.string().optional(),
  steps: z.array(PlanStepSchema).min(1),
});
export type ApprovedPlan = z.infer<typeof ApprovedPlanSchema>;

export type PlanAnswer =
  | {
      matched: true;
      step: PlanStep;
      command: string;
      rollback: string | undefined;
      safety: SafetyLabel;
      message: string;
    }
  | { matched: false; reason: string; message: string; candidates: PlanStep[] };

/** Verbs that name the same kind of change, so "restart it" finds `kubectl rollout restart deploy/web`. */
const VERB_FAMILIES: ReadonlyArray<readonly string[]> = [
  ['rollout restart', 'rollout latest', 'rollout retry'],
  ['rollout undo', 'rollback'],
  ['scale', 'autoscale'],
  ['patch', 'edit', 'apply', 'replace', 'set', 'label', 'annotate'],
  ['delete', 'idle'],
  ['drain', 'adm drain'],
  ['cordon', 'adm cordon'],
  ['uncordon', 'adm uncordon'],
  ['taint', 'adm taint'],
  ['create', 'apply', 'expose', 'run'],
];

function family(verb: string): readonly string[] {
  const head = verb.startsWith('set ') ? 'set' : verb;
  return VERB_FAMILIES.find((f) => f.includes(head)) ?? [head];
}

/** Phrases like "apply the fix" or "fix it" name no particular change: they mean "the plan's change". */
function isGeneric(request: UserRequest): boolean {
  return request.source === 'natural-language' && request.verb === 'apply' && !request.resource;
}

function score(request: UserRequest, step: PlanStep): number | undefined {
  const parsed = classifyCommandLine(step.command);
  if (!parsed) return undefined;
  let total = 0;
  const requestVerb = request.verb.startsWith('set ') ? 'set' : request.verb;
  const stepVerb = parsed.verb.startsWith('set ') ? 'set' : parsed.verb;
  if (request.verb === parsed.verb) total += 3;
  else if (family(requestVerb).includes(stepVerb)) total += 2;
  else return undefined;
  const want = request.resource;
  const have = parsed.resource;
  if (want && have) {
    if (canonicalKind(want.kind) !== canonicalKind(have.kind)) return undefined;
    total += 2;
    if (want.name && have.name) {
      if (want.name !== have.name) return undefined;
      total += 3;
    }
  }
  if (request.namespace && parsed.namespace) {
    if (request.namespace !== parsed.namespace) return undefined;
    total += 1;
  }
  return total;
}

function safetyOf(step: PlanStep): SafetyLabel {
  if (step.safety) return step.safety;
  if (step.mode === 'read') return 'SAFE';
  const parsed = classifyCommandLine(step.command);
  return parsed?.kind === 'dangerous' ? 'DANGEROUS' : 'REQUIRES_APPROVAL';
}

/** Steps are named by the number the plan view shows, never by their internal id. */
function stepLabel(plan: ApprovedPlan, step: PlanStep): string {
  return `step ${plan.steps.indexOf(step) + 1}`;
}

function render(plan: ApprovedPlan, step: PlanStep, safety: SafetyLabel): string {
  return [
    `calmops does not run changes. From the approved plan "${escapeText(plan.title ?? plan.id)}"${plan.approvedBy ? ` (approved by ${mention(plan.approvedBy)})` : ''}, ${stepLabel(plan, step)}${step.description ? `: ${escapeText(step.description)}` : ''}`,
    '```',
    escapeText(step.command),
    '```',
    `Rollback:${step.rollback ? '' : ' none recorded'}`,
    ...(step.rollback ? ['```', escapeText(step.rollback), '```'] : []),
    `Safety: ${safety}`,
  ].join('\n');
}

/**
 * `stepId` is the step a typed command was matched to word for word (src/review/plan-progress.ts); without it,
 * the request is matched by what it changes.
 */
export function answerFromPlan(
  request: UserRequest,
  plan: ApprovedPlan | undefined,
  options: { stepId?: string } = {},
): PlanAnswer {
  if (!plan) {
    return {
      matched: false,
      reason: 'no approved plan',
      message: 'There is no approved plan yet. Ask for a remediation plan; changes come from the approved plan only.',
      candidates: [],
    };
  }
  const exact = options.stepId === undefined ? undefined : plan.steps.find((s) => s.id === options.stepId);
  if (exact) {
    const safety = safetyOf(exact);
    return {
      matched: true,
      step: exact,
      command: exact.command,
      rollback: exact.rollback,
      safety,
      message: render(plan, exact, safety),
    };
  }
  const writes = plan.steps.filter((s) => s.mode === 'write');
  if (isGeneric(request) && writes.length === 1) {
    const step = writes[0] as PlanStep;
    const safety = safetyOf(step);
    return {
      matched: true,
      step,
      command: step.command,
      rollback: step.rollback,
      safety,
      message: render(plan, step, safety),
    };
  }
  const scored = writes
    .map((step) => ({ step, score: score(request, step) }))
    .filter((s): s is { step: PlanStep; score: number } => s.score !== undefined)
    .sort((a, b) => b.score - a.score);
  const best = scored[0];
  if (!best || (isGeneric(request) && writes.length > 1)) {
    const candidates = isGeneric(request) ? writes : [];
    return {
      matched: false,
      reason: isGeneric(request) ? 'several plan steps could be meant' : 'no plan step matches the request',
      message: [
        `"${escapeText(request.raw)}" is not a step of the approved plan "${escapeText(plan.title ?? plan.id)}". The plan's changes are:`,
        ...writes.map((s) => `• ${stepLabel(plan, s)}: \`${escapeText(s.command)}\``),
      ].join('\n'),
      candidates,
    };
  }
  const ties = scored.filter((s) => s.score === best.score);
  if (ties.length > 1) {
    return {
      matched: false,
      reason: 'several plan steps match equally',
      message: [
        `"${escapeText(request.raw)}" matches more than one step of the plan; name the one you mean:`,
        ...ties.map((s) => `• ${stepLabel(plan, s.step)}: \`${escapeText(s.step.command)}\``),
      ].join('\n'),
      candidates: ties.map((s) => s.step),
    };
  }
  const safety = safetyOf(best.step);
  return {
    matched: true,
    step: best.step,
    command: best.step.command,
    rollback: best.step.rollback,
    safety,
    message: render(plan, best.step, safety),
  };
}

/** What the route knows of the override in force. */
export interface OverrideInForce {
  id: string;
  approver: string;
  expiresAt: string;
  change?: string | undefined;
}

function overrideStep(command: string): PlanStep {
  return { id: 'break-glass-change', command, mode: 'write', description: 'the change the override was granted for' };
}

/**
 * A change asked for under an active break-glass override. The override names the change it was granted for and
 * unlocks exactly that (any spelling of it); an approved plan's steps are answered from the plan as always; any
 * other change is refused with what the override is for. An override granted without naming a change (an older
 * request) allows the change asked for, as the person typed it.
 */
export function answerUnderOverride(
  request: UserRequest,
  override: OverrideInForce,
  fromPlan: PlanAnswer | undefined,
): PlanAnswer {
  if (fromPlan?.matched) return fromPlan;
  const until = override.expiresAt.slice(11, 16);
  const grant = `break-glass override \`${escapeText(override.id)}\`, granted by ${mention(override.approver)} until ${until} UTC`;
  const allowed = (command: string): PlanAnswer => {
    const step = overrideStep(command);
    return {
      matched: true,
      step,
      command,
      rollback: undefined,
      safety: 'DANGEROUS',
      message: [
        `Allowed under the ${grant}${override.change ? ', for this change only' : ''}. calmops does not run changes: run it yourself.`,
        '```',
        escapeText(command),
        '```',
        'Rollback: none recorded; note what you would undo. Safety: DANGEROUS. Audited as request-under-override.',
      ].join('\n'),
    };
  };
  if (!override.change) return allowed(request.raw);
  const named = answerFromPlan(request, { id: override.id, steps: [overrideStep(override.change)] });
  const typed = classifyCommandLine(override.change);
  const same =
    named.matched ||
    (request.source === 'command' &&
      typed !== undefined &&
      typed.verb === request.verb &&
      canonicalKind(typed.resource?.kind ?? '') === canonicalKind(request.resource?.kind ?? '') &&
      typed.resource?.name === request.resource?.name);
  if (same) return allowed(override.change);
  return {
    matched: false,
    reason: 'not the change the override was granted for',
    message: `The ${grant}, is for \`${escapeText(override.change)}\` only; "${escapeText(request.raw)}" is not that change. Another change needs its own break-glass request or an approved plan.`,
    candidates: [],
  };
}
