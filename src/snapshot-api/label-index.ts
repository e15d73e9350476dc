import type { StoredObject } from '../cluster/stored-object.js';
import type { ResourceKind } from '../cluster/types.js';
import { type LabelOperator, type LabelSelector, matchesLabels } from './selectors.js';

/**
 * Where the objects carrying one label key sit in a list of objects (`scope`): a label-selected list asks about a
 * few keys of thousands of objects, so each key is read off every object once and the query's objects are then
 * found by value instead of by testing them all.
 */
export interface LabelKeyIndex {
  /** The objects the positions point into, in catalog order. */
  scope: readonly StoredObject[];
  /** Positions, ascending, of the objects with the key, by its value. */
  byValue: ReadonlyMap<string, readonly number[]>;
  /** Positions, ascending, of every object with the key. */
  present: readonly number[];
}

const NO_OBJECTS: LabelKeyIndex = { scope: [], byValue: new Map(), present: [] };

/** Read the same way the selector's rule reads labels (`requirementHolds`): own keys only. */
function indexLabelKey(scope: readonly StoredObject[], key: string): LabelKeyIndex {
  const byValue = new Map<string, number[]>();
  const present: number[] = [];
  for (let position = 0; position < scope.length; position += 1) {
    const labels = (scope[position] as StoredObject).labels;
    if (labels === undefined || !Object.hasOwn(labels, key)) continue;
    const value = labels[key] as string;
    const positions = byValue.get(value);
    if (positions === undefined) byValue.set(value, [position]);
    else positions.push(position);
    present.push(position);
  }
  return { scope, byValue, present };
}

/**
 * The key indexes of a catalog's resources, made the first time a key is asked about in a scope (one namespace, or
 * all). A key no object of the scope carries is not kept, so a client asking for ever new keys cannot grow it.
 */
export class LabelIndex {
  private readonly keys = new Map<string, LabelKeyIndex>();

  constructor(
    private readonly scopeOf: (resource: ResourceKind, namespace: string | undefined) => readonly StoredObject[],
  ) {}

  key(resource: ResourceKind, namespace: string | undefined, key: string): LabelKeyIndex {
    const id = JSON.stringify([resource, namespace ?? null, key]);
    const known = this.keys.get(id);
    if (known !== undefined) return known;
    const index = indexLabelKey(this.scopeOf(resource, namespace), key);
    if (index.present.length === 0) return NO_OBJECTS;
    this.keys.set(id, index);
    return index;
  }
}

// Requirements only an object carrying the key can meet; `!=`, `notin` and `!key` are met by objects without it.
const NEEDS_KEY: ReadonlySet<LabelOperator> = new Set(['=', 'in', 'exists', 'gt', 'lt']);

/**
 * The objects that can match `selector`, in scope order: those meeting its requirement met by the fewest objects
 * among the ones that need their key. Undefined when no requirement needs its key; the caller then tests every
 * object. Either way the caller still tests the whole selector, so matching stays `matchesLabels`' alone.
 */
export function labelCandidates(
  selector: LabelSelector,
  indexOf: (key: string) => LabelKeyIndex,
): readonly StoredObject[] | undefined {
  let best: { scope: readonly StoredObject[]; lists: (readonly number[])[]; count: number } | undefined;
  for (const requirement of selector) {
    if (!NEEDS_KEY.has(requirement.operator)) continue;
    const index = indexOf(requirement.key);
    const lists: (readonly number[])[] = [];
    let count = 0;
    // A requirement reads one key, so whether it holds is a question about the value alone, asked once per value.
    for (const [value, positions] of index.byValue) {
      if (!matchesLabels([requirement], { [requirement.key]: value })) continue;
      lists.push(positions);
      count += positions.length;
    }
    if (best === undefined || count < best.count) {
      best = { scope: index.scope, lists: lists.length === index.byValue.size ? [index.present] : lists, count };
    }
    if (count === 0) break;
  }
  if (best === undefined) return undefined;
  const { scope, lists } = best;
  const positions = lists.length === 1 ? (lists[0] as readonly number[]) : lists.flat().sort((a, b) => a - b);
  return positions.map((position) => scope[position] as StoredObject);
}
