import * as z from 'zod';
import { Code, isKubeLabel, isKubeName, KUBE_NAME_MAX, NoteText, SlackId } from '../limits.js';

/**
 * The remediation plan contract. A plan is the only artifact calmops synthesizes; it is guarded before any review
 * (docs/concepts.md: strict contract, forbidden legacy keys, one guided regeneration, then a human).
 */

export const PLAN_VERSION = '1';

/** Keys from looser plan shapes that must never be accepted: they hide steps from the review rubric. */
const FORBIDDEN_PLAN_KEYS = ['version', 'actions', 'commands', 'tasks', 'outputs'] as const;

const kebab = z.string().regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'must be kebab-case');

/**
 * The guard's words for a name kubectl would refuse. The synthesizer reads them back on its one regeneration
 * (`rejectedNames`), so the message and its parser live together.
 */
function invalidNameMessage(name: string): string {
  return `"${name.slice(0, 300)}" is not a valid Kubernetes name (lowercase letters, digits, "-" and "." only, at most ${KUBE_NAME_MAX})`;
}

/** The names the guard refused, read back from its errors: the guidance of a regeneration. */
export function rejectedNames(errors: readonly string[]): Set<string> {
  const names = new Set<string>();
  for (const error of errors) {
    for (const match of error.matchAll(/"([^"]*)" is not a valid Kubernetes name/g)) names.add(match[1] ?? '');
  }
  return names;
}

const kubeName = z.string().refine(isKubeName, { error: (issue) => invalidNameMessage(String(issue.input)) });
const namespaceName = z
  .string()
  .refine(isKubeLabel, { error: (issue) => `"${String(issue.input).slice(0, 100)}" is not a valid namespace` });

/** An object a step reads or changes, named as the cluster names it. */
const PlanTargetSchema = z
  .object({
    kind: Code,
    name: kubeName,
    namespace: namespaceName.optional(),
  })
  .strict();
export type PlanTarget = z.infer<typeof PlanTargetSchema>;

/** A template placeholder left in a command means the plan was never filled in. */
const UNRENDERED = /\{\{\s*[\w.]+\s*\}\}/;

const PlanStepSchema = z
  .object({
    id: kebab,
    description: z.string().min(1),
    command: z.string().min(1),
    mode: z.enum(['read', 'write']),
    safety: z.enum(['SAFE', 'REQUIRES_APPROVAL', 'DANGEROUS']),
    rollback: z.string().min(1).optional(),
    needs: z.array(kebab).default([]),
    /** The objects the command names; each must appear in the command or its rollback. */
    targets: z.array(PlanTargetSchema).max(10).optional(),
    /** Files this step's output is saved as (a manifest to re-apply or edit); later steps may `-f` only these. */
    saves: z
      .array(z.string().regex(/^[\w.<>-]{1,120}$/, 'a file name'))
      .max(4)
      .optional(),
  })
  .strict()
  .superRefine((step, ctx) => {
    if (step.mode === 'write' && !step.rollback) {
      ctx.addIssue({ code: 'custom', path: ['rollback'], message: `write step "${step.id}" needs a rollback` });
    }
    if (step.mode === 'write' && step.safety === 'SAFE') {
      ctx.addIssue({ code: 'custom', path: ['safety'], message: `write step "${step.id}" cannot be labelled SAFE` });
    }
    for (const field of ['command', 'rollback', 'description'] as const) {
      if (UNRENDERED.test(step[field] ?? '')) {
        ctx.addIssue({
          code: 'custom',
          path: [field],
          message: `step "${step.id}" has an unfilled template placeholder`,
        });
      }
    }
    const text = `${step.command}\n${step.rollback ?? ''}`;
    (step.targets ?? []).forEach((target, index) => {
      if (isKubeName(target.name) && !text.includes(target.name)) {
        ctx.addIssue({
          code: 'custom',
          path: ['targets', index, 'name'],
          message: `step "${step.id}" names ${target.kind} ${target.name} but its command does not`,
        });
      }
    });
  });
export type PlanStep = z.infer<typeof PlanStepSchema>;

type StepIssue = { path: (string | number)[]; message: string };

/** The files a command line reads with `-f FILE`, `--filename FILE` or `--filename=FILE` (stdin `-` is no file). */
export function filesUsed(command: string): string[] {
  const files: string[] = [];
  for (const m of command.matchAll(/(?:^|\s)(?:-f|--filename)(?:\s+|=)([^\s'"]+)/g)) {
    const file = m[1] ?? '';
    if (file !== '-' && !/^https?:/.test(file)) files.push(file);
  }
  return files;
}

/** Every step a step waits for, directly or through the steps it waits for. */
function ancestors(steps: readonly PlanStep[], index: number): Set<string> {
  const byId = new Map(steps.map((s) => [s.id, s]));
  const seen = new Set<string>();
  const queue = [...(steps[index]?.needs ?? [])];
  for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
    if (seen.has(id)) continue;
    seen.add(id);
    queue.push(...(byId.get(id)?.needs ?? []));
  }
  return seen;
}

/**
 * A file a step applies must come from a step it waits for (which saves it); a file nobody saves is a file the
 * plan never provides. A rollback may also use what the step's own reads saved.
 */
function fileIssues(steps: readonly PlanStep[]): StepIssue[] {
  const issues: StepIssue[] = [];
  steps.forEach((step, index) => {
    const before = ancestors(steps, index);
    const provided = new Set(steps.filter((s) => before.has(s.id)).flatMap((s) => s.saves ?? []));
    for (const [field, text] of [
      ['command', step.command],
      ['rollback', step.rollback ?? ''],
    ] as const) {
      for (const file of filesUsed(text)) {
        if (provided.has(file)) continue;
        const saver = steps.find((s) => (s.saves ?? []).includes(file));
        issues.push({
          path: [index, field],
          message: saver
            ? `step "${step.id}" uses ${file}, saved by "${saver.id}", without waiting for it`
            : `step "${step.id}" uses ${file}, which no step saves`,
        });
      }
    }
  });
  return issues;
}

/** Ids are unique and steps run top to bottom: a step may only need steps above it. */
function stepOrderIssues(steps: readonly PlanStep[]): StepIssue[] {
  const issues: StepIssue[] = [];
  const ids = new Set<string>();
  steps.forEach((step, index) => {
    if (ids.has(step.id)) issues.push({ path: [index, 'id'], message: `duplicate step id "${step.id}"` });
    ids.add(step.id);
  });
  steps.forEach((step, index) => {
    step.needs.forEach((need) => {
      const position = steps.findIndex((s) => s.id === need);
      if (position === -1) issues.push({ path: [index, 'needs'], message: `unknown step "${need}"` });
      else if (position >= index) {
        issues.push({ path: [index, 'needs'], message: `step "${step.id}" needs "${need}", which comes later` });
      }
    });
  });
  return issues;
}

const StepListSchema = z
  .array(PlanStepSchema)
  .min(1)
  .max(20)
  .superRefine((steps, ctx) => {
    for (const issue of [...stepOrderIssues(steps), ...fileIssues(steps)]) ctx.addIssue({ code: 'custom', ...issue });
  });

/** Another way to fix the same fault; a reviewer's note can choose it. */
const PlanAlternativeSchema = z
  .object({
    id: kebab,
    summary: z.string().min(1),
    steps: StepListSchema,
  })
  .strict();
export type PlanAlternative = z.infer<typeof PlanAlternativeSchema>;

/** What a revision changed on a reviewer's request, or the question it asks when the note could not be applied. */
const PlanRevisionSchema = z
  .object({
    number: z.number().int().min(1),
    note: NoteText.min(1),
    requestedBy: SlackId.optional(),
    applied: z.array(z.string().min(1).max(500)).max(20),
    question: z.string().min(1).max(1000).optional(),
    /** Names a reviewer's edit used that the names rule refused (invalid, or neither existing nor created). */
    refusedNames: z.array(z.string().max(300)).max(10).optional(),
  })
  .strict();

const RemediationPlanSchema = z
  .object({
    plan_version: z.literal(PLAN_VERSION),
    name: kebab,
    summary: z.string().min(1),
    rootCause: z.string().min(1),
    namespace: namespaceName,
    author: z.string().min(1),
    steps: StepListSchema,
    alternatives: z.array(PlanAlternativeSchema).max(3).optional(),
    revision: PlanRevisionSchema.optional(),
  })
  .strict();
export type RemediationPlan = z.infer<typeof RemediationPlanSchema>;

export function hasMutatingSteps(plan: RemediationPlan): boolean {
  return plan.steps.some((s) => s.mode === 'write');
}

export type GuardResult = { ok: true; plan: RemediationPlan } | { ok: false; errors: string[] };

/** The schema guard: every plan passes here before review, whoever synthesized or edited it. */
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
