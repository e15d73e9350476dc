import { SYMPTOM_DEPTH, stackDepth } from '../diagnosis/blackboard.js';
import type { ResourceRef } from '../triage/envelope/index.js';
import type { SpecialistFinding } from './types.js';

/**
 * What a specialist's findings do to the triage's ranking. A finding that its analyzer marks as upstream, that
 * touches the top cause's chain and sits below the top cause in the stack takes the lead (the readiness check's unreachable database is why the Route has no
 * backends); a new finding on that chain confirms it with new evidence; anything else leaves the ranking as it is.
 */

export interface RankedCause {
  code: string;
  resource: ResourceRef;
  chain?: readonly ResourceRef[];
}

export type RankingEffect =
  | { effect: 'changed'; from: RankedCause | undefined; to: SpecialistFinding; reason: string }
  | { effect: 'confirmed'; top: RankedCause; by: SpecialistFinding[]; reason: string }
  | { effect: 'unchanged'; top: RankedCause | undefined; reason: string };

const key = (r: ResourceRef) => `${r.kind.toLowerCase()}/${r.namespace ?? ''}/${r.name}`;

export function rankingEffect(top: RankedCause | undefined, added: readonly SpecialistFinding[]): RankingEffect {
  const chain = new Set(top ? [top.resource, ...(top.chain ?? [])].map(key) : []);
  const touches = (f: SpecialistFinding) => [f.resource, ...f.related].some((r) => chain.has(key(r)));
  // Upstream means further down the stack than the top cause, and not an object the triage already put on the
  // cause's chain, unless the top cause sits where traffic failures merely show (a Route, a Service).
  const upstreamOf = (f: SpecialistFinding, t: RankedCause) =>
    touches(f) &&
    stackDepth(f.resource) < stackDepth(t.resource) &&
    (!chain.has(key(f.resource)) || stackDepth(t.resource) >= SYMPTOM_DEPTH);
  const upstream = added.find((f) => f.explains && f.code !== top?.code && (top === undefined || upstreamOf(f, top)));
  if (upstream) {
    return {
      effect: 'changed',
      from: top,
      to: upstream,
      reason: top
        ? `${upstream.code} explains ${top.code}: ${upstream.message}`
        : `${upstream.code}: ${upstream.message}`,
    };
  }
  const on = top ? added.filter(touches) : [];
  if (top && on.length > 0) {
    return {
      effect: 'confirmed',
      top,
      by: on,
      reason: `new evidence on the same chain: ${on.map((f) => f.code).join(', ')}`,
    };
  }
  return {
    effect: 'unchanged',
    top,
    reason: added.length === 0 ? 'no new finding' : 'the new findings are elsewhere and do not explain the top cause',
  };
}
