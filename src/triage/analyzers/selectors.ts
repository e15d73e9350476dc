/** Label selector matching for Service selectors (maps) and metav1.LabelSelector (matchLabels + matchExpressions). */

export interface LabelSelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | string;
  values?: string[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

export function matchesMap(selector: Record<string, string> | undefined, labels: Record<string, string> | undefined) {
  if (selector === undefined) return false;
  const have = labels ?? {};
  return Object.entries(selector).every(([k, v]) => have[k] === v);
}

export function matchesSelector(selector: LabelSelector | undefined, labels: Record<string, string> | undefined) {
  if (selector === undefined || selector === null) return true;
  const have = labels ?? {};
  if (!Object.entries(selector.matchLabels ?? {}).every(([k, v]) => have[k] === v)) return false;
  return (selector.matchExpressions ?? []).every((req) => requirementHolds(req, have));
}

/** Node affinity `nodeSelectorTerms` use the same requirement shape, plus Gt/Lt. */
export function requirementHolds(req: LabelSelectorRequirement, labels: Record<string, string>): boolean {
  const value = labels[req.key];
  const values = req.values ?? [];
  switch (req.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
      return value !== undefined && Number(value) > Number(values[0]);
    case 'Lt':
      return value !== undefined && Number(value) < Number(values[0]);
    default:
      return false;
  }
}

export function formatMap(selector: Record<string, string>): string {
  return Object.entries(selector)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}

export function formatSelector(selector: LabelSelector | undefined): string {
  if (selector === undefined) return '<all>';
  const parts = Object.entries(selector.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const req of selector.matchExpressions ?? []) {
    const values = (req.values ?? []).join(',');
    parts.push(
      req.operator === 'Exists'
        ? req.key
        : req.operator === 'DoesNotExist'
          ? `!${req.key}`
          : `${req.key} ${req.operator.toLowerCase()} (${values})`,
    );
  }
  return parts.join(',') || '<all>';
}
