import type { ClusterReader, KubeObject, ResourceKind } from '../cluster/types.js';
import { canonicalKind, kindLabel, LOG_OWNER_KINDS } from '../diagnosis/kinds.js';
import { formatSelector, isPodReady, type LabelSelector } from '../triage/kube/index.js';

/**
 * Which pod `kubectl logs deployment/web`, `kubectl logs svc/web` or `kubectl logs -l app=web` reads: a pod the
 * object selects, as kubectl picks one. calmops prefers a pod that is not ready, since that is the one a person
 * asking for "the logs" during an incident wants to see.
 */

export type LogTarget = { pod: string; note: string } | { pod?: undefined; note: string };

function selectorOf(object: KubeObject, kind: string): string | undefined {
  const spec = (object['spec'] ?? {}) as { selector?: unknown };
  if (kind === 'services') {
    const map = spec.selector as Record<string, string> | undefined;
    if (!map || Object.keys(map).length === 0) return undefined;
    return formatSelector({ matchLabels: map });
  }
  const selector = spec.selector as LabelSelector | undefined;
  if (!selector || (!selector.matchLabels && !selector.matchExpressions)) return undefined;
  const text = formatSelector(selector);
  return text === '<all>' ? undefined : text;
}

export async function logTarget(
  reader: ClusterReader,
  target: { kind: string; name?: string; namespace: string; labelSelector?: string },
  signal?: AbortSignal,
): Promise<LogTarget> {
  const kind = canonicalKind(target.kind);
  let selector = target.labelSelector;
  let what = `pods selected by ${selector ?? ''}`;
  if (target.name !== undefined && LOG_OWNER_KINDS.includes(kind)) {
    const object = await reader.get(
      { kind: kind as ResourceKind, name: target.name, namespace: target.namespace },
      signal,
    );
    selector = selectorOf(object, kind);
    what = `${kindLabel(kind)} ${target.name}`;
    if (selector === undefined) return { note: `${what} has no pod selector, so it has no pods to read logs from` };
  }
  if (selector === undefined) return { note: 'logs need a pod name, a workload or a label selector' };
  const pods = await reader.list(
    { kind: 'pods', namespace: target.namespace, labelSelector: selector, maxItems: 100 },
    signal,
  );
  if (pods.length === 0) return { note: `${what} selects no pods (${selector})` };
  const unready = pods.filter((p) => !isPodReady(p));
  const chosen = unready[0] ?? pods[0];
  if (!chosen) return { note: `${what} selects no pods (${selector})` };
  const state =
    unready.length > 0 ? `not ready, ${unready.length} of ${pods.length} not ready` : `${pods.length} ready`;
  return { pod: chosen.metadata.name, note: `pod ${chosen.metadata.name} of ${what} (${state})` };
}
