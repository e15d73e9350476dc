import { conditionOf, isConditionTrue } from '../cluster/conditions.js';
import { eventTime } from '../cluster/event-time.js';
import type { KubeObject, ResourceKind } from '../cluster/types.js';

/**
 * Server-side printing (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`) with the columns kube-apiserver
 * and OpenShift print for each kind (pkg/printers/internalversion/printers.go), so `kubectl get` output reads like
 * a real cluster's. Priority-1 columns appear only with `-o wide`.
 */

interface ColumnDefinition {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  format: string;
  description: string;
  priority: number;
}

type Cell = string | number | boolean;

interface Column {
  name: string;
  type?: ColumnDefinition['type'];
  format?: string;
  priority?: number;
  description?: string;
  cell: (object: KubeObject, now: Date) => Cell;
}

export type IncludeObject = 'None' | 'Metadata' | 'Object';

export interface Table {
  kind: 'Table';
  apiVersion: 'meta.k8s.io/v1';
  metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number };
  columnDefinitions: ColumnDefinition[];
  rows: { cells: Cell[]; object?: unknown }[];
}

/** kubectl's duration.HumanDuration: the compact ages (`45s`, `3m20s`, `5h12m`, `12d`) printed everywhere. */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8)
    return hours % 24 === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const days = Math.floor(hours / 24) % 365;
    return days === 0 ? `${Math.floor(hours / 24 / 365)}y` : `${Math.floor(hours / 24 / 365)}y${days}d`;
  }
  return `${Math.floor(hours / 24 / 365)}y`;
}

function since(timestamp: unknown, now: Date): string {
  if (typeof timestamp !== 'string' || timestamp === '') return '<unknown>';
  const at = Date.parse(timestamp);
  if (Number.isNaN(at)) return '<unknown>';
  return humanDuration(now.getTime() - at);
}

const age: Column = {
  name: 'Age',
  description: 'CreationTimestamp is a timestamp representing the server time when this object was created.',
  cell: (o, now) => since(o.metadata.creationTimestamp, now),
};

const nameColumn: Column = {
  name: 'Name',
  format: 'name',
  description: 'Name must be unique within a namespace.',
  cell: (o) => o.metadata.name,
};

// biome-ignore lint/suspicious/noExplicitAny: raw API JSON read defensively
type Json = any;

const list = (value: Json): Json[] => (Array.isArray(value) ? value : []);
const text = (value: Json, fallback = '<none>'): string =>
  typeof value === 'string' && value !== '' ? value : typeof value === 'number' ? String(value) : fallback;

/** The STATUS column of `kubectl get pods`, following printPod's precedence of reasons. */
export function podStatus(pod: KubeObject): string {
  const status: Json = pod.status ?? {};
  let reason: string = text(status.reason, '') || text(status.phase, 'Unknown');
  const initStatuses = list(status.initContainerStatuses);
  const initCount = list(pod.spec?.initContainers).length;
  let initializing = false;
  initStatuses.forEach((c: Json, i: number) => {
    if (initializing) return;
    const terminated = c.state?.terminated;
    const waiting = c.state?.waiting;
    if (terminated && terminated.exitCode === 0) return;
    if (c.started === true && list(pod.spec?.initContainers)[i]?.restartPolicy === 'Always') return;
    if (terminated) {
      reason = terminated.reason
        ? `Init:${terminated.reason}`
        : terminated.signal
          ? `Init:Signal:${terminated.signal}`
          : `Init:ExitCode:${terminated.exitCode}`;
    } else if (waiting?.reason && waiting.reason !== 'PodInitializing') {
      reason = `Init:${waiting.reason}`;
    } else {
      reason = `Init:${i}/${initCount}`;
    }
    initializing = true;
  });
  if (!initializing) {
    let hasRunning = false;
    const statuses = list(status.containerStatuses);
    for (let i = statuses.length - 1; i >= 0; i -= 1) {
      const c: Json = statuses[i];
      const waiting = c.state?.waiting;
      const terminated = c.state?.terminated;
      if (waiting?.reason) reason = waiting.reason;
      else if (terminated?.reason) reason = terminated.reason;
      else if (terminated)
        reason = terminated.signal ? `Signal:${terminated.signal}` : `ExitCode:${terminated.exitCode}`;
      else if (c.ready && c.state?.running) hasRunning = true;
    }
    if (reason === 'Completed' && hasRunning) {
      const ready = isConditionTrue(pod, 'Ready');
      reason = ready ? 'Running' : 'NotReady';
    }
  }
  if (pod.metadata.deletionTimestamp) reason = status.reason === 'NodeLost' ? 'Unknown' : 'Terminating';
  return reason;
}

function podReady(pod: KubeObject): string {
  const total = list(pod.spec?.containers).length;
  const ready = list(pod.status?.containerStatuses).filter((c: Json) => c.ready === true).length;
  return `${ready}/${total}`;
}

function podRestarts(pod: KubeObject, now: Date): string {
  let restarts = 0;
  let lastRestart: number | undefined;
  for (const c of list(pod.status?.containerStatuses)) {
    restarts += typeof c.restartCount === 'number' ? c.restartCount : 0;
    const finished = Date.parse(c.lastState?.terminated?.finishedAt ?? '');
    if (!Number.isNaN(finished) && (lastRestart === undefined || finished > lastRestart)) lastRestart = finished;
  }
  if (restarts > 0 && lastRestart !== undefined) {
    return `${restarts} (${humanDuration(now.getTime() - lastRestart)} ago)`;
  }
  return String(restarts);
}

const ACCESS_MODES: Readonly<Record<string, string>> = {
  ReadWriteOnce: 'RWO',
  ReadOnlyMany: 'ROX',
  ReadWriteMany: 'RWX',
  ReadWriteOncePod: 'RWOP',
};
const accessModes = (modes: Json): string =>
  list(modes)
    .map((m: string) => ACCESS_MODES[m] ?? m)
    .join(',');

function labelSelectorText(selector: Json): string {
  if (!selector || typeof selector !== 'object') return '<none>';
  const parts: string[] = Object.entries(selector.matchLabels ?? {}).map(([k, v]) => `${k}=${String(v)}`);
  for (const expr of list(selector.matchExpressions)) {
    const op = String(expr.operator ?? '').toLowerCase();
    if (op === 'exists') parts.push(expr.key);
    else if (op === 'doesnotexist') parts.push(`!${expr.key}`);
    else parts.push(`${expr.key} ${op} (${list(expr.values).join(',')})`);
  }
  return parts.length > 0 ? parts.join(',') : '<none>';
}

function mapSelector(selector: Json): string {
  const entries = Object.entries(selector ?? {});
  return entries.length > 0 ? entries.map(([k, v]) => `${k}=${String(v)}`).join(',') : '<none>';
}

function servicePorts(svc: KubeObject): string {
  const ports = list(svc.spec?.ports);
  if (ports.length === 0) return '<none>';
  return ports.map((p: Json) => `${p.port}${p.nodePort ? `:${p.nodePort}` : ''}/${p.protocol ?? 'TCP'}`).join(',');
}

function serviceExternalIp(svc: KubeObject): string {
  const type = svc.spec?.type ?? 'ClusterIP';
  const external = list(svc.spec?.externalIPs);
  const ingress = list(svc.status?.loadBalancer?.ingress).map((i: Json) => i.ip ?? i.hostname);
  if (type === 'ExternalName') return text(svc.spec?.externalName);
  if (type === 'LoadBalancer') {
    const all = [...ingress, ...external];
    return all.length > 0 ? all.join(',') : '<pending>';
  }
  return external.length > 0 ? external.join(',') : '<none>';
}

function ingressAddress(obj: KubeObject): string {
  const ingress = list(obj.status?.loadBalancer?.ingress).map((i: Json) => i.ip ?? i.hostname);
  return ingress.length > 0 ? ingress.join(',') : '';
}

function ingressHosts(obj: KubeObject): string {
  const hosts = list(obj.spec?.rules)
    .map((r: Json) => r.host)
    .filter((h: unknown) => typeof h === 'string' && h !== '');
  return hosts.length > 0 ? hosts.join(',') : '*';
}

function nodeStatus(node: KubeObject): string {
  const ready = conditionOf(node, 'Ready');
  const parts = [ready ? (ready.status === 'True' ? 'Ready' : 'NotReady') : 'Unknown'];
  if (node.spec?.unschedulable) parts.push('SchedulingDisabled');
  return parts.join(',');
}

function nodeRoles(node: KubeObject): string {
  const roles = Object.keys(node.metadata.labels ?? {})
    .filter((k) => k.startsWith('node-role.kubernetes.io/'))
    .map((k) => k.slice('node-role.kubernetes.io/'.length))
    .filter((r) => r !== '');
  const kubernetesRole = node.metadata.labels?.['kubernetes.io/role'];
  if (kubernetesRole) roles.push(kubernetesRole);
  return roles.length > 0 ? [...new Set(roles)].sort().join(',') : '<none>';
}

function nodeAddress(node: KubeObject, type: string): string {
  const address = list(node.status?.addresses).find((a: Json) => a.type === type);
  return text(address?.address);
}

function eventObject(ev: KubeObject): string {
  const involved: Json = ev.involvedObject ?? {};
  return `${String(involved.kind ?? '').toLowerCase()}/${involved.name ?? ''}`;
}

function eventLastSeen(ev: KubeObject, now: Date): string {
  const json: Json = ev;
  const last = eventTime(json);
  return since(last === undefined ? undefined : new Date(last).toISOString(), now);
}

function routeHost(route: KubeObject): string {
  return text(route.spec?.host);
}

function routeServices(route: KubeObject): string {
  const to: Json = route.spec?.to;
  const backends: Json[] = [to, ...list(route.spec?.alternateBackends)].filter(Boolean);
  if (backends.length === 0) return '';
  if (backends.length === 1) return text(backends[0].name, '');
  const total = backends.reduce((sum: number, b: Json) => sum + (typeof b.weight === 'number' ? b.weight : 100), 0);
  return backends
    .map((b: Json) => {
      const weight = typeof b.weight === 'number' ? b.weight : 100;
      return `${b.name}(${total > 0 ? Math.round((weight * 100) / total) : 0}%)`;
    })
    .join(',');
}

function routeTermination(route: KubeObject): string {
  const tls: Json = route.spec?.tls;
  if (!tls?.termination) return '';
  return tls.insecureEdgeTerminationPolicy
    ? `${tls.termination}/${tls.insecureEdgeTerminationPolicy}`
    : tls.termination;
}

function containersOf(o: KubeObject): Json[] {
  return list(o.spec?.template?.spec?.containers);
}

/** The wide-output Containers and Images columns shared by every workload with a pod template. */
const podTemplateColumns: readonly Column[] = [
  {
    name: 'Containers',
    priority: 1,
    cell: (o) =>
      containersOf(o)
        .map((c) => c.name)
        .join(','),
  },
  {
    name: 'Images',
    priority: 1,
    cell: (o) =>
      containersOf(o)
        .map((c) => c.image)
        .join(','),
  },
];

const COLUMNS: Partial<Record<ResourceKind, Column[]>> = {
  pods: [
    nameColumn,
    { name: 'Ready', cell: podReady, description: 'The aggregate readiness state of this pod for accepting traffic.' },
    { name: 'Status', cell: (o) => podStatus(o), description: 'The aggregate status of the containers in this pod.' },
    {
      name: 'Restarts',
      cell: podRestarts,
      description:
        'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.',
    },
    age,
    { name: 'IP', priority: 1, cell: (o) => text(o.status?.podIP) },
    { name: 'Node', priority: 1, cell: (o) => text(o.spec?.nodeName) },
    { name: 'Nominated Node', priority: 1, cell: (o) => text(o.status?.nominatedNodeName) },
    {
      name: 'Readiness Gates',
      priority: 1,
      cell: (o) => {
        const gates = list(o.spec?.readinessGates);
        if (gates.length === 0) return '<none>';
        const met = gates.filter((g: Json) => isConditionTrue(o, g.conditionType)).length;
        return `${met}/${gates.length}`;
      },
    },
  ],
  events: [
    { name: 'Last Seen', cell: eventLastSeen },
    { name: 'Type', cell: (o) => text(o.type, '') },
    { name: 'Reason', cell: (o) => text(o.reason, '') },
    { name: 'Object', cell: eventObject },
    { name: 'Subobject', priority: 1, cell: (o) => text((o.involvedObject as Json)?.fieldPath, '') },
    {
      name: 'Source',
      priority: 1,
      cell: (o) => {
        const source: Json = o.source ?? {};
        return source.host
          ? `${source.component ?? ''}, ${source.host}`
          : text(source.component, text(o.reportingComponent, ''));
      },
    },
    { name: 'Message', cell: (o) => text(o.message, '').trim() },
    { name: 'First Seen', priority: 1, cell: (o, now) => since(o.firstTimestamp ?? o.eventTime, now) },
    { name: 'Count', type: 'integer', priority: 1, cell: (o) => (typeof o.count === 'number' ? o.count : 1) },
    { name: 'Name', format: 'name', priority: 1, cell: (o) => o.metadata.name },
  ],
  persistentvolumeclaims: [
    nameColumn,
    { name: 'Status', cell: (o) => (o.metadata.deletionTimestamp ? 'Terminating' : text(o.status?.phase, 'Pending')) },
    { name: 'Volume', cell: (o) => text(o.spec?.volumeName, '') },
    { name: 'Capacity', cell: (o) => text(o.status?.capacity?.storage, '') },
    { name: 'Access Modes', cell: (o) => accessModes(o.status?.accessModes) },
    { name: 'StorageClass', cell: (o) => text(o.spec?.storageClassName, '<unset>') },
    { name: 'VolumeAttributesClass', cell: (o) => text(o.spec?.volumeAttributesClassName, '<unset>') },
    age,
    { name: 'VolumeMode', priority: 1, cell: (o) => text(o.spec?.volumeMode, 'Filesystem') },
  ],
  persistentvolumes: [
    nameColumn,
    { name: 'Capacity', cell: (o) => text(o.spec?.capacity?.storage, '') },
    { name: 'Access Modes', cell: (o) => accessModes(o.spec?.accessModes) },
    { name: 'Reclaim Policy', cell: (o) => text(o.spec?.persistentVolumeReclaimPolicy, '') },
    { name: 'Status', cell: (o) => (o.metadata.deletionTimestamp ? 'Terminating' : text(o.status?.phase, '')) },
    {
      name: 'Claim',
      cell: (o) => {
        const ref: Json = o.spec?.claimRef;
        return ref?.name ? `${ref.namespace ?? ''}/${ref.name}` : '';
      },
    },
    { name: 'StorageClass', cell: (o) => text(o.spec?.storageClassName, '') },
    { name: 'VolumeAttributesClass', cell: (o) => text(o.spec?.volumeAttributesClassName, '<unset>') },
    { name: 'Reason', cell: (o) => text(o.status?.reason, '') },
    age,
    { name: 'VolumeMode', priority: 1, cell: (o) => text(o.spec?.volumeMode, 'Filesystem') },
  ],
  storageclasses: [
    {
      ...nameColumn,
      cell: (o) => {
        const annotations = o.metadata.annotations ?? {};
        const isDefault =
          annotations['storageclass.kubernetes.io/is-default-class'] === 'true' ||
          annotations['storageclass.beta.kubernetes.io/is-default-class'] === 'true';
        return isDefault ? `${o.metadata.name} (default)` : o.metadata.name;
      },
    },
    { name: 'Provisioner', cell: (o) => text(o.provisioner, '') },
    { name: 'ReclaimPolicy', cell: (o) => text(o.reclaimPolicy, 'Delete') },
    { name: 'VolumeBindingMode', cell: (o) => text(o.volumeBindingMode, 'Immediate') },
    { name: 'AllowVolumeExpansion', type: 'boolean', cell: (o) => o.allowVolumeExpansion === true },
    age,
  ],
  nodes: [
    nameColumn,
    { name: 'Status', cell: nodeStatus },
    { name: 'Roles', cell: nodeRoles },
    age,
    { name: 'Version', cell: (o) => text(o.status?.nodeInfo?.kubeletVersion, '') },
    { name: 'Internal-IP', priority: 1, cell: (o) => nodeAddress(o, 'InternalIP') },
    { name: 'External-IP', priority: 1, cell: (o) => nodeAddress(o, 'ExternalIP') },
    { name: 'OS-Image', priority: 1, cell: (o) => text(o.status?.nodeInfo?.osImage, '<unknown>') },
    { name: 'Kernel-Version', priority: 1, cell: (o) => text(o.status?.nodeInfo?.kernelVersion, '<unknown>') },
    {
      name: 'Container-Runtime',
      priority: 1,
      cell: (o) => text(o.status?.nodeInfo?.containerRuntimeVersion, '<unknown>'),
    },
  ],
  deployments: [
    nameColumn,
    { name: 'Ready', cell: (o) => `${o.status?.readyReplicas ?? 0}/${o.spec?.replicas ?? 1}` },
    { name: 'Up-to-date', type: 'integer', cell: (o) => o.status?.updatedReplicas ?? 0 },
    { name: 'Available', type: 'integer', cell: (o) => o.status?.availableReplicas ?? 0 },
    age,
    ...podTemplateColumns,
    { name: 'Selector', priority: 1, cell: (o) => labelSelectorText(o.spec?.selector) },
  ],
  replicasets: [
    nameColumn,
    { name: 'Desired', type: 'integer', cell: (o) => o.spec?.replicas ?? 1 },
    { name: 'Current', type: 'integer', cell: (o) => o.status?.replicas ?? 0 },
    { name: 'Ready', type: 'integer', cell: (o) => o.status?.readyReplicas ?? 0 },
    age,
    ...podTemplateColumns,
    { name: 'Selector', priority: 1, cell: (o) => labelSelectorText(o.spec?.selector) },
  ],
  statefulsets: [
    nameColumn,
    { name: 'Ready', cell: (o) => `${o.status?.readyReplicas ?? 0}/${o.spec?.replicas ?? 1}` },
    age,
    ...podTemplateColumns,
  ],
  daemonsets: [
    nameColumn,
    { name: 'Desired', type: 'integer', cell: (o) => o.status?.desiredNumberScheduled ?? 0 },
    { name: 'Current', type: 'integer', cell: (o) => o.status?.currentNumberScheduled ?? 0 },
    { name: 'Ready', type: 'integer', cell: (o) => o.status?.numberReady ?? 0 },
    { name: 'Up-to-date', type: 'integer', cell: (o) => o.status?.updatedNumberScheduled ?? 0 },
    { name: 'Available', type: 'integer', cell: (o) => o.status?.numberAvailable ?? 0 },
    { name: 'Node Selector', cell: (o) => mapSelector(o.spec?.template?.spec?.nodeSelector) },
    age,
  ],
  services: [
    nameColumn,
    { name: 'Type', cell: (o) => text(o.spec?.type, 'ClusterIP') },
    { name: 'Cluster-IP', cell: (o) => text(o.spec?.clusterIP) },
    { name: 'External-IP', cell: serviceExternalIp },
    { name: 'Port(s)', cell: servicePorts },
    age,
    { name: 'Selector', priority: 1, cell: (o) => mapSelector(o.spec?.selector) },
  ],
  endpoints: [
    nameColumn,
    {
      name: 'Endpoints',
      cell: (o) => {
        const pairs: string[] = [];
        for (const subset of list(o.subsets)) {
          for (const address of list(subset.addresses)) {
            const ports = list(subset.ports);
            if (ports.length === 0) pairs.push(address.ip);
            for (const port of ports) pairs.push(`${address.ip}:${port.port}`);
          }
        }
        if (pairs.length === 0) return '<none>';
        return pairs.length > 3 ? `${pairs.slice(0, 3).join(',')} + ${pairs.length - 3} more...` : pairs.join(',');
      },
    },
    age,
  ],
  endpointslices: [
    nameColumn,
    { name: 'AddressType', cell: (o) => text(o.addressType, '') },
    {
      name: 'Ports',
      cell: (o) => {
        const ports = list(o.ports).map((p: Json) => p.port);
        return ports.length > 0 ? ports.join(',') : '<unset>';
      },
    },
    {
      name: 'Endpoints',
      cell: (o) => {
        const addresses = list(o.endpoints).flatMap((e: Json) => list(e.addresses));
        if (addresses.length === 0) return '<unset>';
        return addresses.length > 3
          ? `${addresses.slice(0, 3).join(',')} + ${addresses.length - 3} more...`
          : addresses.join(',');
      },
    },
    age,
  ],
  ingresses: [
    nameColumn,
    { name: 'Class', cell: (o) => text(o.spec?.ingressClassName) },
    { name: 'Hosts', cell: ingressHosts },
    { name: 'Address', cell: ingressAddress },
    { name: 'Ports', cell: (o) => (list(o.spec?.tls).length > 0 ? '80, 443' : '80') },
    age,
  ],
  ingressclasses: [
    nameColumn,
    { name: 'Controller', cell: (o) => text(o.spec?.controller, '') },
    {
      name: 'Parameters',
      cell: (o) => {
        const p: Json = o.spec?.parameters;
        return p?.name ? `${p.kind ?? ''}/${p.name}` : '<none>';
      },
    },
    age,
  ],
  routes: [
    nameColumn,
    { name: 'Host/Port', cell: routeHost },
    { name: 'Path', cell: (o) => text(o.spec?.path, '') },
    { name: 'Services', cell: routeServices },
    { name: 'Port', cell: (o) => text(o.spec?.port?.targetPort, '<all>') },
    { name: 'Termination', cell: routeTermination },
    { name: 'Wildcard', cell: (o) => text(o.spec?.wildcardPolicy, 'None') },
  ],
  configmaps: [
    nameColumn,
    {
      name: 'Data',
      type: 'integer',
      cell: (o) => Object.keys((o.data as object) ?? {}).length + Object.keys((o.binaryData as object) ?? {}).length,
    },
    age,
  ],
  namespaces: [nameColumn, { name: 'Status', cell: (o) => text(o.status?.phase, 'Active') }, age],
};

const GENERIC: Column[] = [nameColumn, age];

function definitions(columns: readonly Column[]): ColumnDefinition[] {
  return columns.map((c) => ({
    name: c.name,
    type: c.type ?? 'string',
    format: c.format ?? '',
    description: c.description ?? c.name,
    priority: c.priority ?? 0,
  }));
}

function rowObject(object: KubeObject, include: IncludeObject): unknown {
  if (include === 'None') return undefined;
  if (include === 'Object') return object;
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: object.metadata };
}

export function toTable(
  resource: ResourceKind,
  objects: readonly KubeObject[],
  options: {
    now: Date;
    resourceVersion: string;
    includeObject?: IncludeObject;
    continueToken?: string;
    remaining?: number;
  },
): Table {
  const columns = COLUMNS[resource] ?? GENERIC;
  const include = options.includeObject ?? 'Metadata';
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: {
      resourceVersion: options.resourceVersion,
      ...(options.continueToken ? { continue: options.continueToken } : {}),
      ...(options.remaining !== undefined ? { remainingItemCount: options.remaining } : {}),
    },
    columnDefinitions: definitions(columns),
    rows: objects.map((object) => {
      const row: Table['rows'][number] = { cells: columns.map((c) => c.cell(object, options.now)) };
      const embedded = rowObject(object, include);
      if (embedded !== undefined) row.object = embedded;
      return row;
    }),
  };
}
