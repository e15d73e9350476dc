/**
 * The one rule for whether labels satisfy a selector requirement, with k8s.io/apimachinery's semantics. The
 * analyzers read requirements in the API's shape (metav1.LabelSelectorRequirement, node affinity's Gt/Lt), and the
 * snapshot API server parses them from `?labelSelector=`; both decide here.
 */

export interface LabelSelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt' | string;
  values?: readonly string[];
}

const INTEGER = /^-?\d+$/;

export function requirementHolds(req: LabelSelectorRequirement, labels: Readonly<Record<string, string>>): boolean {
  // Own keys only: a label named `constructor` is not the object's prototype.
  const has = Object.hasOwn(labels, req.key);
  const value = has ? labels[req.key] : undefined;
  const values = req.values ?? [];
  switch (req.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    case 'Gt':
    case 'Lt': {
      // Both sides must be integers, as the API server requires; anything else selects nothing.
      if (value === undefined || !INTEGER.test(value) || !INTEGER.test(values[0] ?? '')) return false;
      return req.operator === 'Gt' ? Number(value) > Number(values[0]) : Number(value) < Number(values[0]);
    }
    default:
      return false;
  }
}
