import { RESOURCES, type ResourceInfo } from '../cluster/resources.js';

/**
 * Legacy discovery documents (APIVersions, APIGroupList, APIGroup, APIResourceList). kubectl asks for aggregated
 * discovery first and falls back to these when the answer is plain `application/json`.
 */

/** Only read verbs are advertised: the server refuses every other verb. */
const VERBS = ['get', 'list', 'watch'] as const;

export const SERVER_VERSION = {
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.0+calmops-snapshot',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2025-01-01T00:00:00Z',
  goVersion: 'go1.23.4',
  compiler: 'gc',
  platform: 'linux/amd64',
} as const;

interface GroupVersion {
  group: string;
  version: string;
  resources: ResourceInfo[];
}

function groupVersions(): GroupVersion[] {
  const byKey = new Map<string, GroupVersion>();
  for (const info of Object.values(RESOURCES)) {
    const key = `${info.group}/${info.version}`;
    let entry = byKey.get(key);
    if (!entry) {
      entry = { group: info.group, version: info.version, resources: [] };
      byKey.set(key, entry);
    }
    entry.resources.push(info);
  }
  return [...byKey.values()];
}

const GROUP_VERSIONS = groupVersions();

const gv = (g: GroupVersion): string => (g.group === '' ? g.version : `${g.group}/${g.version}`);

export function apiVersions(): object {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '127.0.0.1' }],
  };
}

function apiGroup(group: string): object | undefined {
  const versions = GROUP_VERSIONS.filter((g) => g.group === group && group !== '');
  const first = versions[0];
  if (!first) return undefined;
  const entries = versions.map((g) => ({ groupVersion: gv(g), version: g.version }));
  return { kind: 'APIGroup', apiVersion: 'v1', name: group, versions: entries, preferredVersion: entries[0] };
}

/** The group list; metrics.k8s.io is in it when the snapshot holds usage, as when metrics-server runs. */
export function apiGroupList(metricsServed = false): object {
  const groups = [...new Set(GROUP_VERSIONS.map((g) => g.group).filter((g) => g !== ''))].sort();
  const listed = groups.map((group) => {
    const { kind: _kind, apiVersion: _apiVersion, ...rest } = apiGroup(group) as Record<string, unknown>;
    return rest;
  });
  if (metricsServed) {
    const { kind: _kind, apiVersion: _apiVersion, ...rest } = metricsGroup() as Record<string, unknown>;
    listed.push(rest);
  }
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: listed };
}

/** metrics.k8s.io/v1beta1, as metrics-server registers it through its APIService. */
export function metricsGroup(): object {
  const version = { groupVersion: 'metrics.k8s.io/v1beta1', version: 'v1beta1' };
  return { kind: 'APIGroup', apiVersion: 'v1', name: 'metrics.k8s.io', versions: [version], preferredVersion: version };
}

export function metricsResourceList(): object {
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: 'metrics.k8s.io/v1beta1',
    resources: [
      { name: 'nodes', singularName: '', namespaced: false, kind: 'NodeMetrics', verbs: ['get', 'list'] },
      { name: 'pods', singularName: '', namespaced: true, kind: 'PodMetrics', verbs: ['get', 'list'] },
    ],
  };
}

export function apiGroupDocument(group: string): object | undefined {
  return apiGroup(group);
}

export function apiResourceList(group: string, version: string): object | undefined {
  const entry = GROUP_VERSIONS.find((g) => g.group === group && g.version === version);
  if (!entry) return undefined;
  const resources: object[] = [];
  // In name order, as kube-apiserver lists them (and so kubectl expands categories such as `all`).
  for (const info of [...entry.resources].sort((a, b) => (a.plural < b.plural ? -1 : 1))) {
    resources.push({
      name: info.plural,
      singularName: info.kind.toLowerCase(),
      namespaced: info.namespaced,
      kind: info.kind,
      verbs: [...VERBS],
      ...(info.shortNames.length > 0 ? { shortNames: [...info.shortNames] } : {}),
      ...(info.plural === 'pods' ? { categories: ['all'] } : {}),
      // kube-apiserver's `all` category (what `kubectl get all` lists).
      ...([
        'services',
        'deployments',
        'replicasets',
        'statefulsets',
        'daemonsets',
        'horizontalpodautoscalers',
        'jobs',
        'cronjobs',
      ].includes(info.plural)
        ? { categories: ['all'] }
        : {}),
    });
    if (info.plural === 'pods') {
      resources.push({ name: 'pods/log', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get'] });
    }
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: gv(entry), resources };
}
