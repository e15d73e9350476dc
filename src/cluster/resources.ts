import type { ResourceKind } from './types.js';

/** Where each readable kind lives in the Kubernetes REST API. Shared by the reader and the snapshot API server. */
export interface ResourceInfo {
  kind: string;
  plural: ResourceKind;
  group: string;
  version: string;
  namespaced: boolean;
  shortNames: readonly string[];
}

export const RESOURCES: Readonly<Record<ResourceKind, ResourceInfo>> = {
  namespaces: {
    kind: 'Namespace',
    plural: 'namespaces',
    group: '',
    version: 'v1',
    namespaced: false,
    shortNames: ['ns'],
  },
  pods: { kind: 'Pod', plural: 'pods', group: '', version: 'v1', namespaced: true, shortNames: ['po'] },
  events: { kind: 'Event', plural: 'events', group: '', version: 'v1', namespaced: true, shortNames: ['ev'] },
  persistentvolumeclaims: {
    kind: 'PersistentVolumeClaim',
    plural: 'persistentvolumeclaims',
    group: '',
    version: 'v1',
    namespaced: true,
    shortNames: ['pvc'],
  },
  persistentvolumes: {
    kind: 'PersistentVolume',
    plural: 'persistentvolumes',
    group: '',
    version: 'v1',
    namespaced: false,
    shortNames: ['pv'],
  },
  storageclasses: {
    kind: 'StorageClass',
    plural: 'storageclasses',
    group: 'storage.k8s.io',
    version: 'v1',
    namespaced: false,
    shortNames: ['sc'],
  },
  nodes: { kind: 'Node', plural: 'nodes', group: '', version: 'v1', namespaced: false, shortNames: ['no'] },
  deployments: {
    kind: 'Deployment',
    plural: 'deployments',
    group: 'apps',
    version: 'v1',
    namespaced: true,
    shortNames: ['deploy'],
  },
  replicasets: {
    kind: 'ReplicaSet',
    plural: 'replicasets',
    group: 'apps',
    version: 'v1',
    namespaced: true,
    shortNames: ['rs'],
  },
  statefulsets: {
    kind: 'StatefulSet',
    plural: 'statefulsets',
    group: 'apps',
    version: 'v1',
    namespaced: true,
    shortNames: ['sts'],
  },
  daemonsets: {
    kind: 'DaemonSet',
    plural: 'daemonsets',
    group: 'apps',
    version: 'v1',
    namespaced: true,
    shortNames: ['ds'],
  },
  services: { kind: 'Service', plural: 'services', group: '', version: 'v1', namespaced: true, shortNames: ['svc'] },
  endpoints: { kind: 'Endpoints', plural: 'endpoints', group: '', version: 'v1', namespaced: true, shortNames: ['ep'] },
  endpointslices: {
    kind: 'EndpointSlice',
    plural: 'endpointslices',
    group: 'discovery.k8s.io',
    version: 'v1',
    namespaced: true,
    shortNames: [],
  },
  ingresses: {
    kind: 'Ingress',
    plural: 'ingresses',
    group: 'networking.k8s.io',
    version: 'v1',
    namespaced: true,
    shortNames: ['ing'],
  },
  ingressclasses: {
    kind: 'IngressClass',
    plural: 'ingressclasses',
    group: 'networking.k8s.io',
    version: 'v1',
    namespaced: false,
    shortNames: [],
  },
  routes: {
    kind: 'Route',
    plural: 'routes',
    group: 'route.openshift.io',
    version: 'v1',
    namespaced: true,
    shortNames: [],
  },
  configmaps: {
    kind: 'ConfigMap',
    plural: 'configmaps',
    group: '',
    version: 'v1',
    namespaced: true,
    shortNames: ['cm'],
  },
  resourcequotas: {
    kind: 'ResourceQuota',
    plural: 'resourcequotas',
    group: '',
    version: 'v1',
    namespaced: true,
    shortNames: ['quota'],
  },
  limitranges: {
    kind: 'LimitRange',
    plural: 'limitranges',
    group: '',
    version: 'v1',
    namespaced: true,
    shortNames: ['limits'],
  },
  networkpolicies: {
    kind: 'NetworkPolicy',
    plural: 'networkpolicies',
    group: 'networking.k8s.io',
    version: 'v1',
    namespaced: true,
    shortNames: ['netpol'],
  },
  poddisruptionbudgets: {
    kind: 'PodDisruptionBudget',
    plural: 'poddisruptionbudgets',
    group: 'policy',
    version: 'v1',
    namespaced: true,
    shortNames: ['pdb'],
  },
  horizontalpodautoscalers: {
    kind: 'HorizontalPodAutoscaler',
    plural: 'horizontalpodautoscalers',
    group: 'autoscaling',
    version: 'v2',
    namespaced: true,
    shortNames: ['hpa'],
  },
  jobs: { kind: 'Job', plural: 'jobs', group: 'batch', version: 'v1', namespaced: true, shortNames: [] },
  cronjobs: {
    kind: 'CronJob',
    plural: 'cronjobs',
    group: 'batch',
    version: 'v1',
    namespaced: true,
    shortNames: ['cj'],
  },
  leases: {
    kind: 'Lease',
    plural: 'leases',
    group: 'coordination.k8s.io',
    version: 'v1',
    namespaced: true,
    shortNames: [],
  },
  volumeattachments: {
    kind: 'VolumeAttachment',
    plural: 'volumeattachments',
    group: 'storage.k8s.io',
    version: 'v1',
    namespaced: false,
    shortNames: [],
  },
  csidrivers: {
    kind: 'CSIDriver',
    plural: 'csidrivers',
    group: 'storage.k8s.io',
    version: 'v1',
    namespaced: false,
    shortNames: [],
  },
};

const BY_KIND = new Map(Object.values(RESOURCES).map((r) => [r.kind, r]));

/** Resolve an object's `kind` (e.g. `PersistentVolumeClaim`) to its resource; undefined for kinds calmops never reads. */
export function resourceForKind(kind: string): ResourceInfo | undefined {
  return BY_KIND.get(kind);
}

/** The API path prefix for a resource, e.g. `/api/v1` or `/apis/apps/v1`. */
export function apiPrefix(info: ResourceInfo): string {
  return info.group === '' ? `/api/${info.version}` : `/apis/${info.group}/${info.version}`;
}
