import { matchPlanStep } from './match.js';
import type { PlanStep } from './plan.js';

/**
 * Where a person stands in the approved plan. The plan's commands are matched as kubectl reads them (match.ts), so
 * `kubectl delete pvc data -n shop` and `oc delete persistentvolumeclaim data --namespace=shop` are the same step.
 * What was run is remembered by step index; a step is in order when the steps it needs came first.
 */

export interface PlanProgress {
  planId: string;
  /** Indexes of the steps a person has been answered for, in the order they came. */
  completed: number[];
}

export interface PlanStepMatch {
  stepIndex: number;
  inOrder: boolean;
  stepId: string;
}

type MatchablePlan = { steps: readonly Pick<PlanStep, 'id' | 'command' | 'rollback' | 'needs'>[] };

/** The approved plan's step a typed command is, if it is one. */
export function planStepOf(
  plan: MatchablePlan | undefined,
  command: string,
  progress: PlanProgress | undefined,
): PlanStepMatch | undefined {
  if (!plan) return undefined;
  const found = matchPlanStep(plan, command, { completed: progress?.completed ?? [] });
  const step = found ? plan.steps[found.stepIndex] : undefined;
  if (!found || !step) return undefined;
  return { stepIndex: found.stepIndex, inOrder: found.inOrder, stepId: step.id };
}

/** The progress after a person was answered for a step: for this plan, with the step remembered once. */
export function withStepDone(progress: PlanProgress | undefined, planId: string, stepIndex: number): PlanProgress {
  const completed = progress?.planId === planId ? progress.completed : [];
  return { planId, completed: completed.includes(stepIndex) ? completed : [...completed, stepIndex] };
}
