import { guardPlan, hasMutatingSteps } from './plan.js';

export const COMPLETENESS_THRESHOLD = 0.8;

export interface ReviewCheck {
  id: 'schema' | 'rollback' | 'evidence' | 'safety-labels';
  passed: boolean;
  detail: string;
}

export interface AutomatedReview {
  passed: boolean;
  checks: ReviewCheck[];
  /** Seed 004's autonomous mode: a plan of read-only steps skips human review. */
  humanReviewRequired: boolean;
}

/** The automated review rubric run before any human sees a plan. */
export function reviewPlan(
  candidate: unknown,
  context: { completeness: number; overrideActive: boolean },
): AutomatedReview {
  const guarded = guardPlan(candidate);
  const checks: ReviewCheck[] = [
    {
      id: 'schema',
      passed: guarded.ok,
      detail: guarded.ok ? 'the plan matches its contract' : guarded.errors.join('; '),
    },
  ];
  const steps = stepsOf(candidate);
  const writes = steps.filter((s) => s.mode === 'write');
  const withoutRollback = writes.filter((s) => typeof s.rollback !== 'string' || s.rollback.trim() === '');
  checks.push({
    id: 'rollback',
    passed: withoutRollback.length === 0,
    detail:
      withoutRollback.length === 0
        ? `${writes.length} mutating step(s), each with a rollback`
        : `no rollback for ${withoutRollback.map((s) => s.id ?? '?').join(', ')}`,
  });
  const evidenceOk = context.completeness >= COMPLETENESS_THRESHOLD || context.overrideActive;
  checks.push({
    id: 'evidence',
    passed: evidenceOk,
    detail: context.overrideActive
      ? `break-glass override active (completeness ${context.completeness.toFixed(2)})`
      : `evidence completeness ${context.completeness.toFixed(2)} (needs ≥ ${COMPLETENESS_THRESHOLD})`,
  });
  const unlabelled = steps.filter((s) => !['SAFE', 'REQUIRES_APPROVAL', 'DANGEROUS'].includes(String(s.safety)));
  checks.push({
    id: 'safety-labels',
    passed: unlabelled.length === 0 && steps.length > 0,
    detail:
      unlabelled.length === 0
        ? 'every step has a safety label'
        : `unlabelled: ${unlabelled.map((s) => s.id ?? '?').join(', ')}`,
  });
  const passed = checks.every((c) => c.passed);
  return { passed, checks, humanReviewRequired: !(passed && guarded.ok && !hasMutatingSteps(guarded.plan)) };
}

interface LooseStep {
  id?: string;
  mode?: unknown;
  rollback?: unknown;
  safety?: unknown;
}

function stepsOf(candidate: unknown): LooseStep[] {
  if (candidate && typeof candidate === 'object' && Array.isArray((candidate as { steps?: unknown }).steps)) {
    return ((candidate as { steps: unknown[] }).steps as unknown[]).filter(
      (s): s is LooseStep => typeof s === 'object' && s !== null,
    );
  }
  return [];
}
