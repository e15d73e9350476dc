import { createHash } from 'node:crypto';
import { logKey, type SnapshotLogs, snapshotNow } from '../../src/cluster/snapshot.js';
import type { KubeObject, OwnerReference } from '../../src/cluster/types.js';

/**
 * What each demo namespace looks like after someone ran the approved plan. calmops never changes a cluster, so in
 * the sandbox this stands in for the person at the keyboard: each function takes the demo cluster and returns it
 * with one namespace (and the cluster-scoped objects its fix creates) as the cluster would report it a few minutes
 * after the fix: new objects with their own uids, controllers' status caught up, Normal events following the
 * fault's warnings, and the logs of the new containers. Everything else is returned untouched.
 */

export interface DemoCluster {
  objects: readonly KubeObject[];
  logs: SnapshotLogs;
}

export interface DemoFixOptions {
  /** When the fix was run; by default three minutes after the namespace's newest timestamp. */
  appliedAt?: Date;
}

export type DemoFixFunction = (cluster: DemoCluster, options?: DemoFixOptions) => DemoCluster;

export interface DemoFix {
  namespace: string;
  /** The root cause the fix removes. */
  rootCause: string;
  /** What was done, as the person who ran the plan would say it. */
  summary: string;
  /** What the person did on a real cluster, step by step (commands where there is one). */
  steps: readonly string[];
  apply: DemoFixFunction;
}

export class DemoFixError extends Error {
  override readonly name = 'DemoFixError';
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;
/** How long after the fault's last sign the plan is run, when the caller does not say. */
const DEFAULT_DELAY = 3 * MINUTE;

// ---------------------------------------------------------------------------------------------------------------
// Small builders

type Clock = (offsetMs: number) => string;

function clockFrom(start: Date): Clock {
  return (offsetMs) => new Date(start.getTime() + offsetMs).toISOString().replace('.000Z', 'Z');
}

/** Stable ids, so that the same fix always produces the same cluster (tests and a restarted sandbox agree). */
function digest(...parts: string[]): string {
  return createHash('sha256').update(parts.join('\u0000')).digest('hex');
}

function uid(...parts: string[]): string {
  const h = digest('uid', ...parts);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** Kubernetes' name suffix alphabet (no vowels, no look-alikes). */
const SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

function suffix(length: number, ...parts: string[]): string {
  const bytes = createHash('sha256').update(parts.join('\u0000')).digest();
  return [...bytes.subarray(0, length)].map((b) => SUFFIX_ALPHABET[b % SUFFIX_ALPHABET.length]).join('');
}

interface Involved {
  apiVersion?: string;
  kind: string;
  name: string;
  uid?: string;
  fieldPath?: string;
}

interface EventInput {
  namespace: string;
  involved: Involved;
  reason: string;
  message: string;
  type?: 'Normal' | 'Warning';
  at: string;
  last?: string;
  count?: number;
  component: string;
  host?: string;
}

function event(input: EventInput): KubeObject {
  const name = `${input.involved.name}.${digest('event', input.involved.name, input.reason, input.at).slice(0, 16)}`;
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: {
      name,
      namespace: input.namespace,
      uid: uid('event', name),
      creationTimestamp: input.at,
    },
    involvedObject: {
      ...(input.involved.apiVersion === undefined ? {} : { apiVersion: input.involved.apiVersion }),
      kind: input.involved.kind,
      name: input.involved.name,
      namespace: input.namespace,
      ...(input.involved.uid === undefined ? {} : { uid: input.involved.uid }),
      ...(input.involved.fieldPath === undefined ? {} : { fieldPath: input.involved.fieldPath }),
    },
    reason: input.reason,
    message: input.message,
    type: input.type ?? 'Normal',
    count: input.count ?? 1,
    firstTimestamp: input.at,
    lastTimestamp: input.last ?? input.at,
    source: { component: input.component, ...(input.host === undefined ? {} : { host: input.host }) },
    reportingComponent: input.component,
    reportingInstance: input.host ?? '',
    eventTime: null,
  };
}

function involvedOf(object: KubeObject, fieldPath?: string): Involved {
  return {
    apiVersion: object.apiVersion ?? 'v1',
    kind: object.kind ?? '',
    name: object.metadata.name,
    ...(object.metadata.uid === undefined ? {} : { uid: object.metadata.uid }),
    ...(fieldPath === undefined ? {} : { fieldPath }),
  };
}

interface ContainerSpec {
  name: string;
  image: string;
  env?: Array<Record<string, unknown>>;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
}

function containersOf(podSpec: { containers?: unknown } | undefined): ContainerSpec[] {
  return Array.isArray(podSpec?.containers) ? (podSpec.containers as ContainerSpec[]) : [];
}

/** The status of a pod whose containers all started at `started` and became Ready at `ready`. */
function runningPodStatus(input: {
  containers: readonly ContainerSpec[];
  scheduled: string;
  started: string;
  ready: string;
  hostIP: string;
  podIP: string;
  qosClass: string;
  restartCounts?: Record<string, number>;
  imageIDs?: Record<string, string>;
  seed: string;
}): Record<string, unknown> {
  return {
    phase: 'Running',
    conditions: [
      { type: 'Initialized', status: 'True', lastProbeTime: null, lastTransitionTime: input.started },
      { type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: input.ready },
      { type: 'ContainersReady', status: 'True', lastProbeTime: null, lastTransitionTime: input.ready },
      { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: input.scheduled },
    ],
    hostIP: input.hostIP,
    podIP: input.podIP,
    podIPs: [{ ip: input.podIP }],
    startTime: input.scheduled,
    containerStatuses: input.containers.map((c) => ({
      name: c.name,
      image: c.image,
      imageID: input.imageIDs?.[c.name] ?? `${c.image.split(':')[0]}@sha256:${digest('image', c.image).slice(0, 64)}`,
      containerID: `containerd://${digest('container', input.seed, c.name).slice(0, 64)}`,
      ready: true,
      started: true,
      restartCount: input.restartCounts?.[c.name] ?? 0,
      state: { running: { startedAt: input.started } },
      lastState: {},
    })),
    qosClass: input.qosClass,
  };
}

function podIP(prefix: string, ...parts: string[]): string {
  const h = createHash('sha256').update(parts.join('\u0000')).digest();
  return `${prefix}.${(h[0] ?? 0) % 250}.${((h[1] ?? 0) % 250) + 2}`;
}

/** The image digest the kubelet already reported for this image, so a restarted pod keeps its image id. */
function imageIDsFrom(pods: readonly KubeObject[]): Record<string, string> {
  const ids: Record<string, string> = {};
  for (const pod of pods) {
    for (const s of (pod.status?.containerStatuses ?? []) as Array<{ name?: string; imageID?: string }>) {
      if (s.name !== undefined && typeof s.imageID === 'string' && s.imageID !== '') ids[s.name] ??= s.imageID;
    }
  }
  return ids;
}

/** An apps/v1 controller's reference, as the controller manager writes it. */
function controllerRef(kind: 'Deployment' | 'ReplicaSet', name: string, ownerUid: string): OwnerReference {
  const ref = { apiVersion: 'apps/v1', kind, name, uid: ownerUid, controller: true, blockOwnerDeletion: true };
  return ref;
}

/** The replica set's pod-template-hash for a template, as stable as the controller's own. */
function templateHash(template: unknown): string {
  return suffix(10, 'template', JSON.stringify(template));
}

// ---------------------------------------------------------------------------------------------------------------
// The namespace a fix works on

interface Scope {
  namespace: string;
  objects: KubeObject[];
  clock: Clock;
  find(kind: string, name: string): KubeObject;
  all(kind: string): KubeObject[];
}

function scopeOf(cluster: DemoCluster, namespace: string, options: DemoFixOptions | undefined): Scope {
  const objects = cluster.objects.filter((o) => o.metadata.namespace === namespace).map((o) => structuredClone(o));
  if (objects.length === 0) throw new DemoFixError(`the cluster has no namespace ${namespace} to fix`);
  const end = snapshotNow(objects);
  const appliedAt = options?.appliedAt ?? (end === undefined ? undefined : new Date(end.getTime() + DEFAULT_DELAY));
  if (appliedAt === undefined || Number.isNaN(appliedAt.getTime())) {
    throw new DemoFixError(`cannot tell when the fix in ${namespace} was run: give appliedAt`);
  }
  const find = (kind: string, name: string) => {
    const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
    if (found === undefined) throw new DemoFixError(`${namespace} has no ${kind} ${name}; is this the demo cluster?`);
    return found;
  };
  return {
    namespace,
    objects,
    clock: clockFrom(appliedAt),
    find,
    all: (kind) => objects.filter((o) => o.kind === kind),
  };
}

/**
 * The cluster with `namespace` replaced by `namespaced`, plus cluster-scoped objects the fix created. Logs of the
 * namespace are replaced as a whole: containers that no longer exist have none.
 */
function replaceNamespace(
  cluster: DemoCluster,
  namespace: string,
  fixed: { namespaced: readonly KubeObject[]; clusterScoped?: readonly KubeObject[]; logs: SnapshotLogs },
): DemoCluster {
  const added = fixed.clusterScoped ?? [];
  const addedKeys = new Set(added.map((o) => `${o.kind}/${o.metadata.name}`));
  const objects: KubeObject[] = [];
  let inserted = false;
  for (const o of cluster.objects) {
    if (o.metadata.namespace === namespace) {
      // Keep the namespace where it was in the file, so a fixed and a restored cluster read in the same order.
      if (!inserted) objects.push(...fixed.namespaced);
      inserted = true;
      continue;
    }
    if (o.metadata.namespace === undefined && addedKeys.has(`${o.kind}/${o.metadata.name}`)) continue;
    objects.push(o);
  }
  if (!inserted) objects.push(...fixed.namespaced);
  objects.push(...added);
  const logs: SnapshotLogs = {};
  for (const [key, text] of Object.entries(cluster.logs)) if (!key.startsWith(`${namespace}/`)) logs[key] = text;
  Object.assign(logs, fixed.logs);
  return { objects, logs };
}

/**
 * A rollout to a new pod template: the new ReplicaSet with its Running, Ready pods, the old one scaled to zero and
 * its pods gone, the Deployment's status caught up, and the events a rollout leaves behind.
 */
function rollOut(
  scope: Scope,
  input: {
    deployment: string;
    oldReplicaSet: string;
    /** Changes the pod template (the fix itself). */
    change: (template: { metadata: Record<string, unknown>; spec: Record<string, unknown> }) => void;
    /** Node and host IP for each new pod, in order. */
    placement: ReadonlyArray<{ node: string; hostIP: string }>;
    podNetwork: string;
    readyAfterMs: number;
  },
): { pods: KubeObject[]; events: KubeObject[] } {
  const { clock, namespace } = scope;
  const deployment = scope.find('Deployment', input.deployment);
  const oldRs = scope.find('ReplicaSet', input.oldReplicaSet);
  const oldPods = scope
    .all('Pod')
    .filter((p) =>
      (p.metadata.ownerReferences ?? []).some((r) => r.kind === 'ReplicaSet' && r.name === oldRs.metadata.name),
    );
  const replicas = Number(deployment.spec?.replicas ?? 1);
  const revision = Number(deployment.metadata.annotations?.['deployment.kubernetes.io/revision'] ?? '1') + 1;
  const generation = Number(deployment.metadata['generation'] ?? 1) + 1;

  const template = structuredClone(deployment.spec.template) as {
    metadata: Record<string, unknown>;
    spec: Record<string, unknown>;
  };
  input.change(template);
  deployment.spec.template = template;
  deployment.metadata.generation = generation;
  deployment.metadata.annotations = {
    ...deployment.metadata.annotations,
    'deployment.kubernetes.io/revision': String(revision),
  };
  const hash = templateHash(template);
  const rsName = `${input.deployment}-${hash}`;
  const rsUid = uid(namespace, 'ReplicaSet', rsName);
  const labels = { ...((template.metadata['labels'] as Record<string, string> | undefined) ?? {}) };

  const settled = clock(input.readyAfterMs);
  deployment.status = {
    observedGeneration: generation,
    replicas,
    updatedReplicas: replicas,
    readyReplicas: replicas,
    availableReplicas: replicas,
    conditions: [
      {
        type: 'Available',
        status: 'True',
        reason: 'MinimumReplicasAvailable',
        message: 'Deployment has minimum availability.',
        lastUpdateTime: settled,
        lastTransitionTime: settled,
      },
      {
        type: 'Progressing',
        status: 'True',
        reason: 'NewReplicaSetAvailable',
        message: `ReplicaSet "${rsName}" has successfully progressed.`,
        lastUpdateTime: settled,
        lastTransitionTime: clock(0),
      },
    ],
  };

  oldRs.spec = { ...oldRs.spec, replicas: 0 };
  oldRs.metadata['generation'] = Number(oldRs.metadata['generation'] ?? 1) + 1;
  oldRs.metadata.annotations = {
    ...oldRs.metadata.annotations,
    'deployment.kubernetes.io/desired-replicas': String(replicas),
  };
  oldRs.status = { replicas: 0, observedGeneration: oldRs.metadata['generation'] };

  const newRs: KubeObject = {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name: rsName,
      namespace,
      uid: rsUid,
      creationTimestamp: clock(0),
      generation: 1,
      labels: { ...labels, 'pod-template-hash': hash },
      annotations: {
        'deployment.kubernetes.io/desired-replicas': String(replicas),
        'deployment.kubernetes.io/max-replicas': String(replicas + 1),
        'deployment.kubernetes.io/revision': String(revision),
      },
      ownerReferences: [controllerRef('Deployment', deployment.metadata.name, deployment.metadata.uid ?? '')],
    },
    spec: {
      replicas,
      selector: { matchLabels: { ...labels, 'pod-template-hash': hash } },
      template: {
        ...template,
        metadata: { ...template.metadata, labels: { ...labels, 'pod-template-hash': hash } },
      },
    },
    status: {
      replicas,
      fullyLabeledReplicas: replicas,
      readyReplicas: replicas,
      availableReplicas: replicas,
      observedGeneration: 1,
    },
  };

  const basePod = oldPods[0];
  if (basePod === undefined) throw new DemoFixError(`${namespace}: ReplicaSet ${input.oldReplicaSet} has no pods`);
  const imageIDs = imageIDsFrom(oldPods);
  const containers = containersOf(template.spec);
  const pods: KubeObject[] = [];
  const events: KubeObject[] = [
    event({
      namespace,
      involved: involvedOf(deployment),
      reason: 'ScalingReplicaSet',
      message: `Scaled up replica set ${rsName} to ${replicas}`,
      at: clock(0),
      component: 'deployment-controller',
    }),
    event({
      namespace,
      involved: involvedOf(deployment),
      reason: 'ScalingReplicaSet',
      message: `Scaled down replica set ${oldRs.metadata.name} to 0 from ${oldPods.length}`,
      at: clock(input.readyAfterMs),
      component: 'deployment-controller',
    }),
  ];
  for (let i = 0; i < replicas; i++) {
    const place = input.placement[i % input.placement.length];
    if (place === undefined) throw new DemoFixError(`${namespace}: no node to place ${rsName} pods on`);
    const name = `${rsName}-${suffix(5, rsName, String(i))}`;
    const podUid = uid(namespace, 'Pod', name);
    const scheduled = clock(2 * SECOND + i * SECOND);
    const started = clock(5 * SECOND + i * SECOND);
    const pod = structuredClone(basePod);
    pod.metadata = {
      name,
      namespace,
      uid: podUid,
      creationTimestamp: clock(i * SECOND),
      labels: { ...labels, 'pod-template-hash': hash },
      ...(template.metadata['annotations'] === undefined
        ? {}
        : { annotations: structuredClone(template.metadata['annotations'] as Record<string, string>) }),
      ownerReferences: [controllerRef('ReplicaSet', rsName, rsUid)],
    };
    pod.spec = { ...pod.spec, containers: structuredClone(template.spec['containers']), nodeName: place.node };
    pod.status = runningPodStatus({
      containers,
      scheduled,
      started,
      ready: clock(input.readyAfterMs - (replicas - 1 - i) * SECOND),
      hostIP: place.hostIP,
      podIP: podIP(input.podNetwork, name),
      qosClass: String(basePod.status?.qosClass ?? 'Burstable'),
      imageIDs,
      seed: name,
    });
    pods.push(pod);
    const involved = involvedOf(pod);
    events.push(
      event({
        namespace,
        involved,
        reason: 'Scheduled',
        message: `Successfully assigned ${namespace}/${name} to ${place.node}`,
        at: scheduled,
        component: 'default-scheduler',
      }),
    );
    for (const c of containers) {
      const at = clock(4 * SECOND + i * SECOND);
      const field = { ...involved, fieldPath: `spec.containers{${c.name}}` };
      events.push(
        event({
          namespace,
          involved: field,
          reason: 'Pulled',
          message: `Container image "${c.image}" already present on machine`,
          at,
          component: 'kubelet',
          host: place.node,
        }),
        event({
          namespace,
          involved: field,
          reason: 'Created',
          message: `Created container ${c.name}`,
          at,
          component: 'kubelet',
          host: place.node,
        }),
        event({
          namespace,
          involved: field,
          reason: 'Started',
          message: `Started container ${c.name}`,
          at: started,
          component: 'kubelet',
          host: place.node,
        }),
      );
    }
  }
  for (const old of oldPods) {
    events.push(
      event({
        namespace,
        involved: involvedOf(oldRs),
        reason: 'SuccessfulDelete',
        message: `Deleted pod: ${old.metadata.name}`,
        at: clock(input.readyAfterMs),
        component: 'replicaset-controller',
      }),
    );
  }
  // The old pods are deleted by the scale-down; their events stay until they expire, as in a real cluster.
  const gone = new Set(oldPods);
  const kept = scope.objects.filter((o) => !gone.has(o));
  scope.objects.length = 0;
  scope.objects.push(...kept, newRs, ...pods, ...events);
  return { pods, events };
}

// ---------------------------------------------------------------------------------------------------------------
// ml-team: the claim names StorageClass fast-ssd, which does not exist

/** Creates the missing StorageClass; the provisioner then creates a volume, the claim binds and the job's pod runs. */
export const fixMlTeam: DemoFixFunction = (cluster, options) => {
  const scope = scopeOf(cluster, 'ml-team', options);
  const { clock, namespace } = scope;
  const claim = scope.find('PersistentVolumeClaim', 'training-cache');
  const className = String(claim.spec?.storageClassName ?? '');
  if (className === '') throw new DemoFixError('ml-team/training-cache names no StorageClass');
  const provisioner = 'pd.csi.storage.gke.io';
  const storageClass: KubeObject = {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: className, uid: uid('StorageClass', className), creationTimestamp: clock(0) },
    provisioner,
    parameters: { type: 'pd-ssd' },
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'Immediate',
    allowVolumeExpansion: true,
  };

  const size = String(claim.spec?.resources?.requests?.storage ?? '1Gi');
  const volumeName = `pvc-${claim.metadata.uid ?? uid(namespace, 'claim', claim.metadata.name)}`;
  const bound = clock(9 * SECOND);
  const volume: KubeObject = {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: {
      name: volumeName,
      uid: uid('PersistentVolume', volumeName),
      creationTimestamp: clock(8 * SECOND),
      annotations: { 'pv.kubernetes.io/provisioned-by': provisioner },
      finalizers: ['kubernetes.io/pv-protection', 'external-attacher/pd-csi-storage-gke-io'],
    },
    spec: {
      accessModes: claim.spec?.accessModes ?? ['ReadWriteOnce'],
      capacity: { storage: size },
      claimRef: {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        namespace,
        name: claim.metadata.name,
        uid: claim.metadata.uid,
      },
      csi: {
        driver: provisioner,
        fsType: 'ext4',
        volumeHandle: `projects/ml-team/zones/us-east-1a/disks/${volumeName}`,
      },
      persistentVolumeReclaimPolicy: 'Delete',
      storageClassName: className,
      volumeMode: 'Filesystem',
    },
    status: { phase: 'Bound', lastPhaseTransitionTime: bound },
  };

  claim.metadata.annotations = {
    ...claim.metadata.annotations,
    'pv.kubernetes.io/bind-completed': 'yes',
    'pv.kubernetes.io/bound-by-controller': 'yes',
    'volume.beta.kubernetes.io/storage-provisioner': provisioner,
    'volume.kubernetes.io/storage-provisioner': provisioner,
  };
  claim.spec = { ...claim.spec, volumeName };
  claim.status = { phase: 'Bound', accessModes: volume.spec.accessModes, capacity: { storage: size } };

  // The job's pod was waiting for the claim; it is scheduled once the claim binds, on a node with room for it.
  const pod = scope.find('Pod', 'trainer-resnet50-ztq8m');
  const node = 'ip-10-3-2-37.ec2.internal';
  const scheduled = clock(12 * SECOND);
  const started = clock(48 * SECOND);
  pod.spec = { ...pod.spec, nodeName: node };
  pod.status = runningPodStatus({
    containers: containersOf(pod.spec),
    scheduled,
    started,
    ready: clock(49 * SECOND),
    hostIP: '10.0.25.118',
    podIP: podIP('10.244', pod.metadata.name),
    qosClass: String(pod.status?.qosClass ?? 'Burstable'),
    seed: pod.metadata.name,
  });
  const job = scope.find('Job', 'trainer-resnet50');
  job.status = { ...job.status, active: 1, ready: 1 };

  const claimRef = involvedOf(claim);
  const podRef = involvedOf(pod);
  const trainer = containersOf(pod.spec)[0];
  scope.objects.push(
    event({
      namespace,
      involved: claimRef,
      reason: 'Provisioning',
      message: `External provisioner is provisioning volume for claim "${namespace}/${claim.metadata.name}"`,
      at: clock(2 * SECOND),
      component: `${provisioner}_csi-controller`,
    }),
    event({
      namespace,
      involved: claimRef,
      reason: 'ProvisioningSucceeded',
      message: `Successfully provisioned volume ${volumeName}`,
      at: clock(8 * SECOND),
      component: `${provisioner}_csi-controller`,
    }),
    event({
      namespace,
      involved: podRef,
      reason: 'Scheduled',
      message: `Successfully assigned ${namespace}/${pod.metadata.name} to ${node}`,
      at: scheduled,
      component: 'default-scheduler',
    }),
    event({
      namespace,
      involved: podRef,
      reason: 'SuccessfulAttachVolume',
      message: `AttachVolume.Attach succeeded for volume "${volumeName}"`,
      at: clock(20 * SECOND),
      component: 'attachdetach-controller',
    }),
    ...(trainer === undefined
      ? []
      : [
          event({
            namespace,
            involved: { ...podRef, fieldPath: `spec.containers{${trainer.name}}` },
            reason: 'Pulled',
            message: `Container image "${trainer.image}" already present on machine`,
            at: clock(46 * SECOND),
            component: 'kubelet',
            host: node,
          }),
          event({
            namespace,
            involved: { ...podRef, fieldPath: `spec.containers{${trainer.name}}` },
            reason: 'Started',
            message: `Started container ${trainer.name}`,
            at: started,
            component: 'kubelet',
            host: node,
          }),
        ]),
  );
  return replaceNamespace(cluster, namespace, {
    namespaced: scope.objects,
    clusterScoped: [storageClass, volume],
    logs: trainer === undefined ? {} : { [logKey(namespace, pod.metadata.name, trainer.name)]: trainerLog(clock) },
  });
};

function trainerLog(clock: Clock): string {
  return [
    `${clock(48 * SECOND)} INFO  resnet50 trainer 1.4.2 starting, cache at /cache (200Gi)`,
    `${clock(50 * SECOND)} INFO  dataset shards found in cache: 0 of 1024, fetching`,
    `${clock(110 * SECOND)} INFO  epoch 1/90 step 100 loss=6.912 lr=0.1`,
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------------------------
// payments: payments-api asks for 4500m CPU, more than any worker node can offer

/** Lowers payments-api's CPU request to one the workers can hold; the rollout's pods are scheduled and Ready. */
export const fixPayments: DemoFixFunction = (cluster, options) => {
  const scope = scopeOf(cluster, 'payments', options);
  const oldRs = scope
    .all('ReplicaSet')
    .find((rs) => rs.metadata.ownerReferences?.some((r) => r.kind === 'Deployment' && r.name === 'payments-api'));
  if (oldRs === undefined)
    throw new DemoFixError('payments has no ReplicaSet of payments-api; is this the demo cluster?');
  rollOut(scope, {
    deployment: 'payments-api',
    oldReplicaSet: oldRs.metadata.name,
    change: (template) => {
      for (const c of containersOf(template.spec)) {
        if (c.name === 'api') c.resources = { ...c.resources, requests: { ...c.resources?.requests, cpu: '1500m' } };
      }
    },
    // 3920m allocatable per worker; ledger-worker already holds 500m on the first.
    placement: [
      { node: 'ip-10-20-1-30.ec2.internal', hostIP: '10.0.1.20' },
      { node: 'ip-10-20-2-43.ec2.internal', hostIP: '10.0.2.43' },
      { node: 'ip-10-20-2-43.ec2.internal', hostIP: '10.0.2.43' },
    ],
    podNetwork: '10.244',
    readyAfterMs: 25 * SECOND,
  });
  return replaceNamespace(cluster, scope.namespace, {
    namespaced: scope.objects,
    logs: logsOf(cluster, scope.namespace),
  });
};

function logsOf(cluster: DemoCluster, namespace: string): SnapshotLogs {
  return Object.fromEntries(Object.entries(cluster.logs).filter(([key]) => key.startsWith(`${namespace}/`)));
}

// ---------------------------------------------------------------------------------------------------------------
// orders: order-worker exits at start-up because DATABASE_URL is not set

/**
 * Adds DATABASE_URL from a ConfigMap and restarts the rollout, as the plan says: the new pods start, connect and
 * stay up, and the crash-looping ones are gone.
 */
export const fixOrders: DemoFixFunction = (cluster, options) => {
  const scope = scopeOf(cluster, 'orders', options);
  const { clock, namespace } = scope;
  const configMap: KubeObject = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'order-worker-config',
      namespace,
      uid: uid(namespace, 'ConfigMap', 'order-worker-config'),
      creationTimestamp: clock(-30 * SECOND),
      labels: { app: 'order-worker' },
    },
    data: { DATABASE_URL: 'postgres://orders-db.orders.svc:5432/orders?sslmode=require' },
  };
  scope.objects.push(configMap);
  const oldRs = scope
    .all('ReplicaSet')
    .find((rs) => rs.metadata.ownerReferences?.some((r) => r.kind === 'Deployment' && r.name === 'order-worker'));
  if (oldRs === undefined)
    throw new DemoFixError('orders has no ReplicaSet of order-worker; is this the demo cluster?');
  const { pods } = rollOut(scope, {
    deployment: 'order-worker',
    oldReplicaSet: oldRs.metadata.name,
    change: (template) => {
      template.metadata['annotations'] = {
        ...(template.metadata['annotations'] as Record<string, string> | undefined),
        'kubectl.kubernetes.io/restartedAt': clock(0),
      };
      for (const c of containersOf(template.spec)) {
        if (c.name !== 'order-worker') continue;
        c.env = [
          ...(c.env ?? []).filter((e) => e['name'] !== 'DATABASE_URL'),
          {
            name: 'DATABASE_URL',
            valueFrom: { configMapKeyRef: { name: configMap.metadata.name, key: 'DATABASE_URL' } },
          },
        ];
      }
    },
    placement: [
      { node: 'ip-10-23-1-30.ec2.internal', hostIP: '10.0.1.20' },
      { node: 'ip-10-23-2-43.ec2.internal', hostIP: '10.0.2.43' },
    ],
    podNetwork: '10.244',
    readyAfterMs: 20 * SECOND,
  });
  const logs: SnapshotLogs = {};
  for (const pod of pods) {
    const started = String(pod.status?.containerStatuses?.[0]?.state?.running?.startedAt ?? clock(0));
    logs[logKey(namespace, pod.metadata.name, 'order-worker')] = orderWorkerLog(started);
  }
  return replaceNamespace(cluster, namespace, { namespaced: scope.objects, logs });
};

function orderWorkerLog(started: string): string {
  const at = clockFrom(new Date(started));
  return [
    `${at(400)} INFO  order-worker 3.4.1 (commit 9f2c1ab) starting`,
    `${at(405)} INFO  config: DATABASE_URL set (postgres, host orders-db.orders.svc)`,
    `${at(620)} INFO  connected to database orders-db.orders.svc:5432/orders`,
    `${at(910)} INFO  connected to broker rabbitmq.orders.svc:5672`,
    `${at(915)} INFO  consuming from queue orders.created (prefetch 20)`,
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------------------------
// inventory: the route answers 503 because no backend pod passes its readiness probe (its database is down)

/**
 * Brings the inventory database back: the readiness probe passes again, the pods turn Ready, the endpoints move them
 * to the ready addresses and the route has backends again. The pods themselves were never restarted.
 */
export const fixInventory: DemoFixFunction = (cluster, options) => {
  const scope = scopeOf(cluster, 'inventory', options);
  const { clock, namespace } = scope;
  const pods = scope
    .all('Pod')
    .filter((p) => p.metadata.labels?.['app'] === 'inventory')
    .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  if (pods.length === 0) throw new DemoFixError('inventory has no inventory pods; is this the demo cluster?');
  const logs: SnapshotLogs = {};
  pods.forEach((pod, i) => {
    const ready = clock(8 * SECOND + i * 3 * SECOND);
    pod.status = {
      ...pod.status,
      conditions: (pod.status?.conditions ?? []).map((c: Record<string, unknown>) =>
        c['type'] === 'Ready' || c['type'] === 'ContainersReady'
          ? { type: c['type'], status: 'True', lastProbeTime: null, lastTransitionTime: ready }
          : c,
      ),
      containerStatuses: (pod.status?.containerStatuses ?? []).map((s: Record<string, unknown>) => ({
        ...s,
        ready: true,
      })),
    };
    for (const c of containersOf(pod.spec)) {
      const at = clockFrom(new Date(ready));
      logs[logKey(namespace, pod.metadata.name, c.name)] = [
        `${at(-20 * SECOND)} WARN readiness: database check failed: dial tcp 172.30.41.17:5432: connect: connection refused`,
        `${at(-10 * SECOND)} INFO database connection pool re-established (172.30.41.17:5432)`,
        `${at(0)} INFO readiness: database check ok (4ms)`,
        `${at(10 * SECOND)} INFO readiness: database check ok (3ms)`,
      ].join('\n');
    }
  });

  const endpoints = scope.find('Endpoints', 'inventory');
  const last = clock(8 * SECOND + (pods.length - 1) * 3 * SECOND);
  endpoints.metadata.annotations = {
    ...endpoints.metadata.annotations,
    'endpoints.kubernetes.io/last-change-trigger-time': last,
  };
  endpoints['subsets'] = ((endpoints['subsets'] ?? []) as Array<Record<string, unknown>>).map((subset) => {
    const { notReadyAddresses, addresses, ...rest } = subset as {
      notReadyAddresses?: unknown[];
      addresses?: unknown[];
    };
    return { addresses: [...(addresses ?? []), ...(notReadyAddresses ?? [])], ...rest };
  });

  const deployment = scope.find('Deployment', 'inventory');
  const { unavailableReplicas: _gone, ...available } = (deployment.status ?? {}) as Record<string, unknown>;
  deployment.status = {
    ...available,
    readyReplicas: pods.length,
    availableReplicas: pods.length,
    conditions: (deployment.status?.conditions ?? []).map((c: Record<string, unknown>) =>
      c['type'] === 'Available'
        ? {
            type: 'Available',
            status: 'True',
            reason: 'MinimumReplicasAvailable',
            message: 'Deployment has minimum availability.',
            lastUpdateTime: last,
            lastTransitionTime: last,
          }
        : c,
    ),
  };
  for (const rs of scope.all('ReplicaSet')) {
    if (!rs.metadata.ownerReferences?.some((r) => r.name === 'inventory')) continue;
    rs.status = { ...rs.status, readyReplicas: pods.length, availableReplicas: pods.length };
  }
  return replaceNamespace(cluster, namespace, { namespaced: scope.objects, logs });
};

// ---------------------------------------------------------------------------------------------------------------

/** One fix per broken demo namespace (wiki is healthy and has none). */
export const DEMO_FIXES: readonly DemoFix[] = [
  {
    namespace: 'ml-team',
    rootCause: 'PVC_STORAGECLASS_NOT_FOUND',
    summary: 'created the StorageClass fast-ssd; the claim bound to a new volume and the training pod runs',
    steps: ['kubectl apply -f storageclass-fast-ssd.yaml'],
    apply: fixMlTeam,
  },
  {
    namespace: 'payments',
    rootCause: 'POD_INSUFFICIENT_CPU',
    summary: 'lowered payments-api’s CPU request to 1500m; the new pods are scheduled and Ready',
    steps: ['kubectl set resources deployment payments-api -n payments --requests=cpu=1500m'],
    apply: fixPayments,
  },
  {
    namespace: 'orders',
    rootCause: 'CONTAINER_CRASHLOOP_CONFIG_ERROR',
    summary: 'set DATABASE_URL from the ConfigMap order-worker-config and restarted order-worker; the pods stay up',
    steps: [
      'kubectl apply -f order-worker-config.yaml',
      'kubectl set env deployment/order-worker -n orders --from=configmap/order-worker-config --keys=DATABASE_URL',
      'kubectl rollout restart deployment order-worker -n orders',
    ],
    apply: fixOrders,
  },
  {
    namespace: 'inventory',
    rootCause: 'ROUTE_PODS_NOT_READY',
    summary: 'brought the inventory database back; both pods pass readiness and the route has backends again',
    steps: [
      'brought the database behind 172.30.41.17:5432 back up',
      'kubectl get endpoints inventory -n inventory   # both pods listed as ready',
    ],
    apply: fixInventory,
  },
];

export function demoFixFor(namespace: string): DemoFix | undefined {
  return DEMO_FIXES.find((f) => f.namespace === namespace);
}
