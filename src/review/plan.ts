import * as z from 'zod';

/**
 * The remediation plan contract. A plan is the only artifact calmops synthesizes; it is guarded before any review
 * (seed 003: strict contract, forbidden legacy keys, one guided regeneration, then a human).
 */

export const PLAN_VERSION = '1';

/** Keys from looser plan shapes that must never be accepted: they hide steps from the review rubric. */
export const FORBIDDEN_PLAN_KEYS = ['version', 'actions', 'commands', 'tasks', 'outputs'] as const;

const kebab = z.string().regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'must be kebab-case');

export const PlanStepSchema = z
  .object({
    id: kebab,
    description: z.string().min(1),
    command: z.string().min(1),
    mode: z.enum(['read', 'write']),
    safety: z.enum(['SAFE', 'REQUIRES_APPROVAL', 'DANGEROUS']),
    rollback: z.string().min(1).optional(),
    needs: z.array(kebab).default([]),
  })
  .strict()
  .superRefine((step, ctx) => {
    if (step.mode === 'write' && !step.rollback) {
      ctx.addIssue({ code: 'custom', path: ['rollback'], message: `write step "${step.id}" needs a rollback` });
    }
    if (step.mode === 'write' && step.safety === 'SAFE') {
      ctx.addIssue({ code: 'custom', path: ['safety'], message: `write step "${step.id}" cannot be labelled SAFE` });
    }
  });
export type PlanStep = z.infer<typeof PlanStepSchema>;

export const RemediationPlanSchema = z
  .object({
    plan_version: z.literal(PLAN_VERSION),
    name: kebab,
    summary: z.string().min(1),
    rootCause: z.string().min(1),
    namespace: z.string().min(1),
    author: z.string().min(1),
    steps: z.array(PlanStepSchema).min(1).max(20),
  })
  .strict()
  .superRefine((plan, ctx) => {
    const ids = new Set<string>();
    plan.steps.forEach((step, index) => {
      if (ids.has(step.id)) {
        ctx.addIssue({ code: 'custom', path: ['steps', index, 'id'], message: `duplicate step id "${step.id}"` });
      }
      ids.add(step.id);
    });
    plan.steps.forEach((step, index) => {
      step.needs.forEach((need) => {
        const position = plan.steps.findIndex((s) => s.id === need);
        if (position === -1) {
          ctx.addIssue({ code: 'custom', path: ['steps', index, 'needs'], message: `unknown step "${need}"` });
        } else if (position >= index) {
          // Steps run top to bottom; a need on a later step is a cycle or an ordering error.
          ctx.addIssue({
            code: 'custom',
            path: ['steps', index, 'needs'],
            message: `step "${step.id}" needs "${need}", which comes later`,
          });
        }
      });
    });
  });
export type RemediationPlan = z.infer<typeof RemediationPlanSchema>;

export function hasMutatingSteps(plan: RemediationPlan): boolean {
  return plan.steps.some((s) => s.mode === 'write');
}

export type GuardResult = { ok: true; plan: RemediationPlan } | { ok: false; errors: string[] };

/** The schema guard: every plan passes here before review, whoever synthesized it. */
export function guardPlan(candidate: unknown): GuardResult {
  const errors: string[] = [];
  if (candidate === null || typeof candidate !== 'object' || Array.isArray(candidate)) {
    return { ok: false, errors: ['the plan is empty or not an object'] };
  }
  for (const key of FORBIDDEN_PLAN_KEYS) {
    if (key in candidate) errors.push(`forbidden key "${key}" (use plan_version and steps)`);
  }
  const parsed = RemediationPlanSchema.safeParse(candidate);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      // Forbidden keys are reported once, above, in words a reviewer understands.
      if (issue.code === 'unrecognized_keys' && issue.keys.every((k) => isForbidden(k))) continue;
      errors.push(`${issue.path.join('.') || 'plan'}: ${issue.message}`);
    }
  }
  if (errors.length > 0 || !parsed.success) return { ok: false, errors };
  return { ok: true, plan: parsed.data };
}

function isForbidden(key: string): boolean {
  return (FORBIDDEN_PLAN_KEYS as readonly string[]).includes(key);
}
