import type { EventSink } from './events.js';
import { guardPlan, type RemediationPlan } from './plan.js';
import type { PlanSynthesisInput, PlanSynthesizer } from './template-synthesizer.js';

export type SynthesisOutcome =
  | { status: 'ready'; plan: RemediationPlan; attempts: number }
  /** The guard rejected the plan twice: a human takes over, with a message that is never empty. */
  | { status: 'needs-human'; message: string; errors: string[]; attempts: number };

/** The plan contract's error policy (docs/concepts.md): guard, exactly one guided regeneration, then a human. */
export async function synthesizePlan(
  synthesizer: PlanSynthesizer,
  input: PlanSynthesisInput,
  events: EventSink,
  now: () => Date = () => new Date(),
): Promise<SynthesisOutcome> {
  const emit = (type: Parameters<EventSink['emit']>[0]['type'], detail: Record<string, unknown>) =>
    events.emit({ type, sessionId: input.sessionId, at: now().toISOString(), detail });

  await emit('plan_synthesis_start', { synthesizer: synthesizer.name, rootCause: input.rootCause.code });
  let errors: string[] = [];
  for (let attempt = 1; attempt <= 2; attempt += 1) {
    if (attempt === 2) await emit('regeneration_attempt', { errors });
    const candidate = await synthesizer.synthesize(
      attempt === 1 ? input : { ...input, feedback: [...(input.feedback ?? []), ...errors] },
    );
    await emit('plan_synthesis_complete', { attempt });
    const guarded = guardPlan(candidate);
    if (guarded.ok) {
      await emit('schema_guard_pass', { attempt, plan: guarded.plan.name, steps: guarded.plan.steps.length });
      return { status: 'ready', plan: guarded.plan, attempts: attempt };
    }
    errors = guarded.errors;
    await emit('schema_guard_fail', { attempt, errors });
  }
  const message = [
    `I could not produce a valid remediation plan for ${input.rootCause.code} (${input.rootCause.summary}).`,
    `The plan failed its checks twice: ${errors.slice(0, 3).join('; ')}.`,
    'Please write the plan by hand in this thread, or ask an approver to take over.',
  ].join(' ');
  await emit('human_needed', { errors });
  return { status: 'needs-human', message, errors, attempts: 2 };
}
