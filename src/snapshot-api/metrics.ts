import type { KubeObject } from '../cluster/types.js';
import { apiGroupList, metricsGroup, metricsResourceList } from './discovery.js';
import type { RouteRequest } from './handler.js';
import { writeJson } from './http.js';
import type { Route } from './routes.js';
import { matchesLabels, parseLabelSelector } from './selectors.js';
import { notFound, pathNotFound } from './status.js';

/**
 * The Metrics API (metrics.k8s.io/v1beta1) as metrics-server serves it, from the usage a snapshot captured:
 * discovery, PodMetrics and NodeMetrics lists (with label selectors, matched against the labels metrics-server
 * copies from the pod or node) and single objects. A snapshot without usage does not serve the group at all, so
 * `kubectl top` answers as it does on a cluster without metrics-server.
 */

export function answerGroups(_target: Extract<Route, { type: 'groups' }>, { state, res }: RouteRequest): void {
  const { metrics } = state.catalog;
  writeJson(res, 200, apiGroupList(metrics.pods.length + metrics.nodes.length > 0));
}

export function answerMetrics(target: Extract<Route, { type: 'metrics' }>, { state, url, res }: RouteRequest): void {
  const { metrics } = state.catalog;
  if (metrics.pods.length + metrics.nodes.length === 0) throw pathNotFound();
  if (target.kind === 'group') {
    writeJson(res, 200, metricsGroup());
    return;
  }
  if (target.kind === 'resources') {
    writeJson(res, 200, metricsResourceList());
    return;
  }
  const all: readonly KubeObject[] = metrics[target.kind];
  const inScope = all.filter((o) => target.namespace === undefined || o.metadata.namespace === target.namespace);
  const kind = target.kind === 'pods' ? 'PodMetrics' : 'NodeMetrics';
  if (target.name !== undefined) {
    const found = inScope.find((o) => o.metadata.name === target.name);
    if (!found) throw notFound(target.kind, target.name, 'metrics.k8s.io');
    writeJson(res, 200, { kind, apiVersion: 'metrics.k8s.io/v1beta1', ...found });
    return;
  }
  const selector = parseLabelSelector(url.searchParams.get('labelSelector') ?? '');
  const items = inScope.filter((o) => matchesLabels(selector, o.metadata.labels));
  writeJson(res, 200, {
    kind: `${kind}List`,
    apiVersion: 'metrics.k8s.io/v1beta1',
    metadata: {},
    items: items.map((o) => ({ ...o, kind, apiVersion: 'metrics.k8s.io/v1beta1' })),
  });
}
