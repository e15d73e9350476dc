/** A status condition as the API server reports it (`Ready`, `PodScheduled`, `Available`, `Bound`, …). */
export interface Condition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

/**
 * The condition of this type in an object's `status.conditions`, when the object reports one. Any object read from
 * the API may be passed: a status or a list that is not what the API documents reads as no condition.
 */
export function conditionOf(obj: { status?: unknown } | undefined, type: string): Condition | undefined {
  const conditions = (obj?.status as { conditions?: unknown } | undefined)?.conditions;
  if (!Array.isArray(conditions)) return undefined;
  for (const condition of conditions) if (condition?.type === type) return condition as Condition;
  return undefined;
}

/** Whether the object reports the condition of this type as `True` (a pod or node that is `Ready`, …). */
export function isConditionTrue(obj: { status?: unknown } | undefined, type: string): boolean {
  return conditionOf(obj, type)?.status === 'True';
}
