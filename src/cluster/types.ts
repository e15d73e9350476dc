/**
 * The shape of what calmops reads from a cluster. Objects stay raw JSON exactly as the API server returns them
 * (the same bytes `kubectl get -o yaml` prints), so snapshots, analyzers and the snapshot API server share one form.
 */

interface OwnerReference {
  apiVersion?: string;
  kind: string;
  name: string;
  uid?: string;
  controller?: boolean;
}

interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  resourceVersion?: string;
  ownerReferences?: OwnerReference[];
  [key: string]: unknown;
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  // biome-ignore lint/suspicious/noExplicitAny: raw API JSON; analyzers narrow what they read
  spec?: any;
  // biome-ignore lint/suspicious/noExplicitAny: raw API JSON; analyzers narrow what they read
  status?: any;
  [key: string]: unknown;
}

/** Every kind calmops may read. Secrets are deliberately absent: the reader refuses them by construction. */
export const READABLE_KINDS = [
  'namespaces',
  'pods',
  'events',
  'persistentvolumeclaims',
  'persistentvolumes',
  'storageclasses',
  'nodes',
  'deployments',
  'replicasets',
  'statefulsets',
  'daemonsets',
  'services',
  'endpoints',
  'endpointslices',
  'ingresses',
  'ingressclasses',
  'routes',
  'configmaps',
  'resourcequotas',
  'limitranges',
  'networkpolicies',
  'poddisruptionbudgets',
  'horizontalpodautoscalers',
  'jobs',
  'cronjobs',
  'leases',
  'volumeattachments',
  'csidrivers',
  // The objects that constrain or serve workloads from elsewhere: admission, access, the metrics API.
  'roles',
  'rolebindings',
  'clusterroles',
  'clusterrolebindings',
  'validatingwebhookconfigurations',
  'mutatingwebhookconfigurations',
  'apiservices',
  'securitycontextconstraints',
  'clusterresourcequotas',
  // Add-ons' custom resources, read for their status.conditions (cert-manager, External Secrets, Istio, Karpenter,
  // MetalLB, OVN-Kubernetes). A cluster without the add-on answers 404: a gap, never a fault.
  'certificates',
  'certificaterequests',
  'issuers',
  'clusterissuers',
  'orders',
  'challenges',
  'externalsecrets',
  'secretstores',
  'clustersecretstores',
  'peerauthentications',
  'authorizationpolicies',
  'destinationrules',
  'virtualservices',
  'httproutes',
  'nodepools',
  'nodeclaims',
  'ipaddresspools',
  'egressfirewalls',
] as const;
export type ResourceKind = (typeof READABLE_KINDS)[number];

export interface ListQuery {
  kind: ResourceKind;
  /** Omitted for cluster-scoped kinds, or to list across all namespaces. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Upper bound on objects returned in total (pages are fetched until this or the end). */
  maxItems?: number;
}

export interface GetQuery {
  kind: ResourceKind;
  namespace?: string;
  name: string;
}

export interface LogQuery {
  namespace: string;
  pod: string;
  container?: string;
  previous?: boolean;
  tailLines?: number;
  /** Only lines newer than this many seconds (kubectl's `--since`). */
  sinceSeconds?: number;
}

/** The rows of a server-side printed list or object (`as=Table`), with each row's object. */
export interface ServerTable {
  columnDefinitions: { name: string; type: string; format?: string; description?: string; priority: number }[];
  rows: { cells: unknown[]; object?: KubeObject }[];
}

/** The metrics.k8s.io resources: what `kubectl top` reads. */
type MetricsKind = 'pods' | 'nodes';

export interface MetricsQuery {
  kind: MetricsKind;
  /** Pods only; omitted for nodes. */
  namespace?: string;
  name?: string;
  labelSelector?: string;
}

/** Why a read did not produce evidence. Surfaces in the envelope as missing evidence, never as a crash. */
export const READ_FAILURE_REASONS = [
  'unreachable',
  'timeout',
  'forbidden',
  'unauthorized',
  'not-found',
  'server-error',
  'refused-by-policy',
  'invalid',
] as const;
export type ReadFailureReason = (typeof READ_FAILURE_REASONS)[number];

export interface ClusterReader {
  list(query: ListQuery, signal?: AbortSignal): Promise<KubeObject[]>;
  get(query: GetQuery, signal?: AbortSignal): Promise<KubeObject>;
  logs(query: LogQuery, signal?: AbortSignal): Promise<string>;
  /**
   * A list (or, with `name`, one object) as the server prints it, each row with its object. Readers that cannot
   * ask for tables leave it out; kubectl then prints on the client, and so does calmops.
   */
  table?(query: ListQuery & { name?: string }, signal?: AbortSignal): Promise<ServerTable>;
  /**
   * PodMetrics or NodeMetrics from metrics.k8s.io. Fails with reason `not-found` when the Metrics API is not served.
   */
  metrics?(query: MetricsQuery, signal?: AbortSignal): Promise<KubeObject[]>;
}

export class ClusterReadError extends Error {
  override readonly name = 'ClusterReadError';
  constructor(
    message: string,
    readonly reason: ReadFailureReason,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Raised before any request leaves the process: a mutating verb, a Secret, or an unknown kind. */
export class ReadOnlyViolationError extends Error {
  override readonly name = 'ReadOnlyViolationError';
  readonly reason: ReadFailureReason = 'refused-by-policy';
}
