import type { Domain } from '../triage/envelope/index.js';

/**
 * Resource kinds a user may name in the incident thread, with kubectl/oc short names, the domain that owns them
 * and whether they are cluster-scoped. Wider than what calmops reads: users talk about Jobs, Secrets and
 * ClusterOperators too, and the gate has to recognise them to judge a request.
 */
interface KindInfo {
  /** Canonical name: the lowercase plural kubectl prints in `api-resources`. */
  plural: string;
  kind: string;
  domain: Domain;
  clusterScoped: boolean;
  aliases: readonly string[];
}

const KINDS: readonly KindInfo[] = [
  { plural: 'pods', kind: 'Pod', domain: 'compute', clusterScoped: false, aliases: ['po', 'pod'] },
  { plural: 'nodes', kind: 'Node', domain: 'compute', clusterScoped: true, aliases: ['no', 'node'] },
  { plural: 'deployments', kind: 'Deployment', domain: 'compute', clusterScoped: false, aliases: ['deploy'] },
  { plural: 'replicasets', kind: 'ReplicaSet', domain: 'compute', clusterScoped: false, aliases: ['rs'] },
  { plural: 'statefulsets', kind: 'StatefulSet', domain: 'compute', clusterScoped: false, aliases: ['sts'] },
  { plural: 'daemonsets', kind: 'DaemonSet', domain: 'compute', clusterScoped: false, aliases: ['ds'] },
  { plural: 'jobs', kind: 'Job', domain: 'compute', clusterScoped: false, aliases: [] },
  { plural: 'cronjobs', kind: 'CronJob', domain: 'compute', clusterScoped: false, aliases: ['cj'] },
  {
    plural: 'horizontalpodautoscalers',
    kind: 'HorizontalPodAutoscaler',
    domain: 'compute',
    clusterScoped: false,
    aliases: ['hpa', 'autoscaler'],
  },
  {
    plural: 'deploymentconfigs',
    kind: 'DeploymentConfig',
    domain: 'compute',
    clusterScoped: false,
    aliases: ['dc'],
  },
  { plural: 'buildconfigs', kind: 'BuildConfig', domain: 'compute', clusterScoped: false, aliases: ['bc'] },
  { plural: 'builds', kind: 'Build', domain: 'compute', clusterScoped: false, aliases: [] },
  { plural: 'imagestreams', kind: 'ImageStream', domain: 'compute', clusterScoped: false, aliases: ['is'] },
  {
    plural: 'persistentvolumeclaims',
    kind: 'PersistentVolumeClaim',
    domain: 'storage',
    clusterScoped: false,
    aliases: ['pvc', 'claim'],
  },
  {
    plural: 'persistentvolumes',
    kind: 'PersistentVolume',
    domain: 'storage',
    clusterScoped: true,
    aliases: ['pv', 'volume'],
  },
  {
    plural: 'storageclasses',
    kind: 'StorageClass',
    domain: 'storage',
    clusterScoped: true,
    aliases: ['sc', 'storage-class'],
  },
  {
    plural: 'volumeattachments',
    kind: 'VolumeAttachment',
    domain: 'storage',
    clusterScoped: true,
    aliases: ['volumeattachment'],
  },
  { plural: 'csidrivers', kind: 'CSIDriver', domain: 'storage', clusterScoped: true, aliases: [] },
  { plural: 'csinodes', kind: 'CSINode', domain: 'storage', clusterScoped: true, aliases: [] },
  {
    plural: 'volumesnapshots',
    kind: 'VolumeSnapshot',
    domain: 'storage',
    clusterScoped: false,
    aliases: ['vs', 'snapshot'],
  },
  { plural: 'services', kind: 'Service', domain: 'networking', clusterScoped: false, aliases: ['svc', 'service'] },
  { plural: 'endpoints', kind: 'Endpoints', domain: 'networking', clusterScoped: false, aliases: ['ep', 'endpoint'] },
  {
    plural: 'endpointslices',
    kind: 'EndpointSlice',
    domain: 'networking',
    clusterScoped: false,
    aliases: ['endpointslice'],
  },
  { plural: 'ingresses', kind: 'Ingress', domain: 'networking', clusterScoped: false, aliases: ['ing', 'ingress'] },
  {
    plural: 'ingressclasses',
    kind: 'IngressClass',
    domain: 'networking',
    clusterScoped: true,
    aliases: ['ingressclass'],
  },
  { plural: 'routes', kind: 'Route', domain: 'networking', clusterScoped: false, aliases: ['route'] },
  {
    plural: 'networkpolicies',
    kind: 'NetworkPolicy',
    domain: 'networking',
    clusterScoped: false,
    aliases: ['netpol', 'networkpolicy'],
  },
  { plural: 'namespaces', kind: 'Namespace', domain: 'platform', clusterScoped: true, aliases: ['ns', 'namespace'] },
  { plural: 'projects', kind: 'Project', domain: 'platform', clusterScoped: true, aliases: ['project'] },
  { plural: 'configmaps', kind: 'ConfigMap', domain: 'platform', clusterScoped: false, aliases: ['cm', 'configmap'] },
  { plural: 'secrets', kind: 'Secret', domain: 'platform', clusterScoped: false, aliases: ['secret'] },
  { plural: 'events', kind: 'Event', domain: 'platform', clusterScoped: false, aliases: ['ev', 'event'] },
  {
    plural: 'serviceaccounts',
    kind: 'ServiceAccount',
    domain: 'platform',
    clusterScoped: false,
    aliases: ['sa', 'serviceaccount'],
  },
  { plural: 'resourcequotas', kind: 'ResourceQuota', domain: 'platform', clusterScoped: false, aliases: ['quota'] },
  { plural: 'limitranges', kind: 'LimitRange', domain: 'platform', clusterScoped: false, aliases: ['limits'] },
  {
    plural: 'clusteroperators',
    kind: 'ClusterOperator',
    domain: 'platform',
    clusterScoped: true,
    aliases: ['co', 'clusteroperator'],
  },
  {
    plural: 'clusterversions',
    kind: 'ClusterVersion',
    domain: 'platform',
    clusterScoped: true,
    aliases: ['clusterversion'],
  },
  {
    plural: 'machineconfigpools',
    kind: 'MachineConfigPool',
    domain: 'platform',
    clusterScoped: true,
    aliases: ['mcp', 'machineconfigpool'],
  },
  { plural: 'machines', kind: 'Machine', domain: 'platform', clusterScoped: false, aliases: ['machine'] },
  {
    plural: 'customresourcedefinitions',
    kind: 'CustomResourceDefinition',
    domain: 'platform',
    clusterScoped: true,
    aliases: ['crd', 'crds'],
  },
  { plural: 'roles', kind: 'Role', domain: 'platform', clusterScoped: false, aliases: ['role'] },
  { plural: 'rolebindings', kind: 'RoleBinding', domain: 'platform', clusterScoped: false, aliases: ['rolebinding'] },
  { plural: 'clusterroles', kind: 'ClusterRole', domain: 'platform', clusterScoped: true, aliases: ['clusterrole'] },
  {
    plural: 'clusterrolebindings',
    kind: 'ClusterRoleBinding',
    domain: 'platform',
    clusterScoped: true,
    aliases: ['clusterrolebinding'],
  },
];

const BY_NAME = new Map<string, KindInfo>();
for (const info of KINDS) {
  for (const name of [info.plural, info.kind.toLowerCase(), ...info.aliases]) BY_NAME.set(name, info);
}

/**
 * The canonical plural for anything a user or an analyzer calls a kind: `po`, `Pod`, `pods`, `deployment.apps`,
 * `deployments.v1.apps`. Unknown kinds are returned lowercased, so CRDs still compare equal to themselves.
 */
export function canonicalKind(name: string): string {
  const lower = name.trim().toLowerCase();
  const base = lower.split('.')[0] ?? lower;
  return BY_NAME.get(base)?.plural ?? BY_NAME.get(lower)?.plural ?? lower;
}

/** True when the word names a resource kind calmops knows. */
export function isKnownKind(name: string): boolean {
  const lower = name.trim().toLowerCase();
  return BY_NAME.has(lower.split('.')[0] ?? lower);
}

export function domainOfKind(name: string): Domain | undefined {
  return BY_NAME.get(canonicalKind(name))?.domain;
}

export function isClusterScoped(name: string): boolean {
  return BY_NAME.get(canonicalKind(name))?.clusterScoped ?? false;
}

/** The Kind (`PersistentVolumeClaim`) for a canonical plural, for human-facing text. */
export function kindLabel(name: string): string {
  return BY_NAME.get(canonicalKind(name))?.kind ?? name;
}

/**
 * Kinds `kubectl logs KIND/NAME` resolves to one of their pods, in the order calmops prefers them when no pod is
 * named: the workloads first, then a Service.
 */
export const LOG_OWNER_KINDS: readonly string[] = [
  'deployments',
  'statefulsets',
  'daemonsets',
  'jobs',
  'replicasets',
  'services',
];
