import { type LabelSelectorRequirement, requirementHolds } from '../../cluster/label-selector.js';

/** Label selector matching for Service selectors (maps) and metav1.LabelSelector (matchLabels + matchExpressions). */

// Node affinity `nodeSelectorTerms` use the same requirement shape, plus Gt/Lt.
export { type LabelSelectorRequirement, requirementHolds };

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
