import { conditionOf } from '../cluster/conditions.js';
import type { ClusterReader, KubeObject, ResourceKind } from '../cluster/types.js';
import { ClusterReadError } from '../cluster/types.js';
import {
  accessModes,
  controllerOf,
  DescribeWriter,
  describeEvents,
  formatLabelSelector,
  formatMap,
  goBool,
  type Json,
  list,
  printAnnotations,
  printLabels,
  printTaints,
  printTolerations,
  rfc1123z,
  selectorString,
  since,
  str,
} from './describe-writer.js';
import { formatQuantity, parseQuantityExact, sumQuantities } from './quantity.js';

/**
 * `kubectl describe` for the kinds people describe during incidents, in kubectl's layout (pkg/describe), each with
 * the reads kubectl makes for it: the object, its events (by involvedObject), and what the describer adds (a node's
 * pods, a deployment's ReplicaSets, a service's endpoint slices, a PVC's users). Kinds without a describer of their
 * own print as kubectl's generic describer prints any object.
 */

export interface DescribeContext {
  reader: ClusterReader;
  now: Date;
  signal?: AbortSignal;
}

async function eventsFor(ctx: DescribeContext, object: KubeObject, options: { kind?: boolean; uid?: string } = {}) {
  const meta = object.metadata;
  const fields = [`involvedObject.name=${meta.name}`];
  if (meta.namespace) fields.push(`involvedObject.namespace=${meta.namespace}`);
  if (options.kind !== false && object.kind) fields.push(`involvedObject.kind=${object.kind}`);
  const uid = options.uid ?? meta.uid;
  if (uid) fields.push(`involvedObject.uid=${uid}`);
  try {
    return await ctx.reader.list(
      { kind: 'events', ...(meta.namespace ? { namespace: meta.namespace } : {}), fieldSelector: fields.join(',') },
      ctx.signal,
    );
  } catch (error) {
    // kubectl describes the object even when its events cannot be read.
    if (error instanceof ClusterReadError) return [];
    throw error;
  }
}

// Pods and their containers

function describeProbe(probe: Json): string {
  // The values as stored: a real API server has filled in the defaults, a hand-written object may not have.
  const attrs = `delay=${probe.initialDelaySeconds ?? 0}s timeout=${probe.timeoutSeconds ?? 0}s period=${probe.periodSeconds ?? 0}s #success=${probe.successThreshold ?? 0} #failure=${probe.failureThreshold ?? 0}`;
  if (probe.exec) return `exec [${list(probe.exec.command).join(' ')}] ${attrs}`;
  if (probe.httpGet) {
    const scheme = str(probe.httpGet.scheme).toLowerCase();
    const port = str(probe.httpGet.port);
    const host = str(probe.httpGet.host);
    return `http-get ${scheme ? `${scheme}:` : ''}//${port ? `${host}:${port}` : host}${str(probe.httpGet.path)} ${attrs}`;
  }
  if (probe.tcpSocket) return `tcp-socket ${str(probe.tcpSocket.host)}:${str(probe.tcpSocket.port)} ${attrs}`;
  if (probe.grpc) return `grpc <pod>:${probe.grpc.port} ${str(probe.grpc.service)} ${attrs}`;
  return `unknown ${attrs}`;
}

function describeState(w: DescribeWriter, name: string, state: Json): void {
  if (state?.running) {
    w.write(2, `${name}:\tRunning\n`);
    w.write(3, `Started:\t${rfc1123z(state.running.startedAt)}\n`);
  } else if (state?.waiting) {
    w.write(2, `${name}:\tWaiting\n`);
    if (str(state.waiting.reason)) w.write(3, `Reason:\t${state.waiting.reason}\n`);
  } else if (state?.terminated) {
    const t = state.terminated;
    w.write(2, `${name}:\tTerminated\n`);
    if (str(t.reason)) w.write(3, `Reason:\t${t.reason}\n`);
    if (str(t.message)) w.write(3, `Message:\t${t.message}\n`);
    w.write(3, `Exit Code:\t${t.exitCode ?? 0}\n`);
    if (typeof t.signal === 'number' && t.signal > 0) w.write(3, `Signal:\t${t.signal}\n`);
    w.write(3, `Started:\t${rfc1123z(t.startedAt)}\n`);
    w.write(3, `Finished:\t${rfc1123z(t.finishedAt)}\n`);
  } else {
    w.write(2, `${name}:\tWaiting\n`);
  }
}

function sortedResourceNames(map: Json): string[] {
  // kubectl's SortableResourceNames: plain string order.
  return Object.keys(map ?? {}).sort();
}

function describeResources(w: DescribeWriter, resources: Json, level: number): void {
  if (!resources) return;
  const limits = resources.limits ?? {};
  const requests = resources.requests ?? {};
  if (Object.keys(limits).length > 0) w.write(level, 'Limits:\n');
  for (const name of sortedResourceNames(limits))
    w.write(level + 1, `${name}:\t${formatQuantity(str(limits[name]))}\n`);
  if (Object.keys(requests).length > 0) w.write(level, 'Requests:\n');
  for (const name of sortedResourceNames(requests)) {
    w.write(level + 1, `${name}:\t${formatQuantity(str(requests[name]))}\n`);
  }
}

function ports(cPorts: Json, host: boolean): string {
  return list(cPorts)
    .map((p: Json) => {
      return `${host ? (p.hostPort ?? 0) : p.containerPort}/${p.protocol ?? 'TCP'}`;
    })
    .join(', ');
}

function describeContainers(
  w: DescribeWriter,
  label: string,
  containers: Json[],
  statuses: Json[] | undefined,
  space: string,
): void {
  w.write(0, `${space}${label}:${containers.length === 0 ? ' <none>' : ''}\n`);
  const byName = new Map(list(statuses).map((s: Json) => [s.name, s]));
  for (const c of containers) {
    const status = byName.get(c.name);
    w.write(1, `${space ? ' ' : ''}${c.name}:\n`);
    if (status) w.write(2, `Container ID:\t${str(status.containerID)}\n`);
    w.write(2, `Image:\t${str(c.image)}\n`);
    if (status) w.write(2, `Image ID:\t${str(status.imageID)}\n`);
    const portText = ports(c.ports, false);
    if (portText.includes(',')) w.write(2, `Ports:\t${portText}\n`);
    else w.write(2, `Port:\t${portText || '<none>'}\n`);
    const hostText = ports(c.ports, true);
    if (hostText.includes(',')) w.write(2, `Host Ports:\t${hostText}\n`);
    else w.write(2, `Host Port:\t${hostText || '<none>'}\n`);
    const seccomp = c.securityContext?.seccompProfile;
    if (seccomp) {
      w.write(2, `SeccompProfile:\t${str(seccomp.type)}\n`);
      if (seccomp.type === 'Localhost') w.write(3, `LocalhostProfile:\t${str(seccomp.localhostProfile)}\n`);
    }
    if (list(c.command).length > 0) {
      w.write(2, 'Command:\n');
      for (const part of list(c.command)) for (const s of str(part).split('\n')) w.write(3, `${s}\n`);
    }
    if (list(c.args).length > 0) {
      w.write(2, 'Args:\n');
      for (const part of list(c.args)) for (const s of str(part).split('\n')) w.write(3, `${s}\n`);
    }
    if (status) {
      describeState(w, 'State', status.state);
      if (status.lastState?.terminated) describeState(w, 'Last State', status.lastState);
      w.write(2, `Ready:\t${status.ready ? 'True' : 'False'}\n`);
      w.write(2, `Restart Count:\t${status.restartCount ?? 0}\n`);
    }
    describeResources(w, c.resources, 2);
    if (c.livenessProbe) w.write(2, `Liveness:\t${describeProbe(c.livenessProbe)}\n`);
    if (c.readinessProbe) w.write(2, `Readiness:\t${describeProbe(c.readinessProbe)}\n`);
    if (c.startupProbe) w.write(2, `Startup:\t${describeProbe(c.startupProbe)}\n`);
    if (list(c.envFrom).length > 0) {
      w.write(2, 'Environment Variables from:\n');
      for (const e of list(c.envFrom)) {
        const ref = e.configMapRef ?? e.secretRef ?? {};
        const from = e.configMapRef ? 'ConfigMap' : 'Secret';
        const optional = ref.optional === true;
        if (str(e.prefix)) w.write(3, `${str(ref.name)}\t${from} with prefix '${e.prefix}'\tOptional: ${optional}\n`);
        else w.write(3, `${str(ref.name)}\t${from}\tOptional: ${optional}\n`);
      }
    }
    const env = list(c.env);
    w.write(2, `Environment:${env.length === 0 ? '\t<none>' : ''}\n`);
    for (const e of env) {
      if (!e.valueFrom) {
        str(e.value)
          .split('\n')
          .forEach((s, i) => {
            w.write(3, i === 0 ? `${e.name}:\t${s}\n` : `\t${s}\n`);
          });
        continue;
      }
      const from = e.valueFrom;
      if (from.fieldRef)
        w.write(3, `${e.name}:\t (${str(from.fieldRef.apiVersion)}:${str(from.fieldRef.fieldPath)})\n`);
      else if (from.resourceFieldRef) w.write(3, `${e.name}:\t (${str(from.resourceFieldRef.resource)})\n`);
      else if (from.secretKeyRef) {
        w.write(
          3,
          `${e.name}:\t<set to the key '${str(from.secretKeyRef.key)}' in secret '${str(from.secretKeyRef.name)}'>\tOptional: ${from.secretKeyRef.optional === true}\n`,
        );
      } else if (from.configMapKeyRef) {
        w.write(
          3,
          `${e.name}:\t<set to the key '${str(from.configMapKeyRef.key)}' of config map '${str(from.configMapKeyRef.name)}'>\tOptional: ${from.configMapKeyRef.optional === true}\n`,
        );
      }
    }
    const mounts = [...list(c.volumeMounts)].sort((a, b) => (str(a.mountPath) < str(b.mountPath) ? -1 : 1));
    w.write(2, `Mounts:${mounts.length === 0 ? '\t<none>' : ''}\n`);
    for (const m of mounts) {
      const flags = [m.readOnly ? 'ro' : 'rw', ...(str(m.subPath) ? [`path=${JSON.stringify(m.subPath)}`] : [])];
      w.write(3, `${str(m.mountPath)} from ${str(m.name)} (${flags.join(',')})\n`);
    }
  }
}

function describeVolumes(w: DescribeWriter, volumes: Json[], space: string): void {
  if (volumes.length === 0) {
    w.write(0, `${space}Volumes:\t<none>\n`);
    return;
  }
  w.write(0, `${space}Volumes:\n`);
  for (const v of volumes) {
    w.write(1, `${space ? ' ' : ''}${v.name}:\n`);
    if (v.hostPath) {
      w.write(
        2,
        `Type:\tHostPath (bare host directory volume)\n    Path:\t${str(v.hostPath.path)}\n    HostPathType:\t${str(v.hostPath.type) || '<none>'}\n`,
      );
    } else if (v.emptyDir) {
      const limit = v.emptyDir.sizeLimit ? str(v.emptyDir.sizeLimit) : '<unset>';
      w.write(
        2,
        `Type:\tEmptyDir (a temporary directory that shares a pod's lifetime)\n    Medium:\t${str(v.emptyDir.medium)}\n    SizeLimit:\t${limit}\n`,
      );
    } else if (v.secret) {
      w.write(
        2,
        `Type:\tSecret (a volume populated by a Secret)\n    SecretName:\t${str(v.secret.secretName)}\n    Optional:\t${goBool(v.secret.optional)}\n`,
      );
    } else if (v.configMap) {
      w.write(
        2,
        `Type:\tConfigMap (a volume populated by a ConfigMap)\n    Name:\t${str(v.configMap.name)}\n    Optional:\t${goBool(v.configMap.optional)}\n`,
      );
    } else if (v.persistentVolumeClaim) {
      w.write(
        2,
        `Type:\tPersistentVolumeClaim (a reference to a PersistentVolumeClaim in the same namespace)\n    ClaimName:\t${str(v.persistentVolumeClaim.claimName)}\n    ReadOnly:\t${goBool(v.persistentVolumeClaim.readOnly)}\n`,
      );
    } else if (v.projected) {
      w.write(2, 'Type:\tProjected (a volume that contains injected data from multiple sources)\n');
      for (const source of list(v.projected.sources)) {
        if (source.secret)
          w.write(
            2,
            `SecretName:\t${str(source.secret.name)}\n    SecretOptional:\t${optionalPointer(source.secret.optional)}\n`,
          );
        else if (source.downwardAPI) w.write(2, 'DownwardAPI:\ttrue\n');
        else if (source.configMap) {
          w.write(
            2,
            `ConfigMapName:\t${str(source.configMap.name)}\n    ConfigMapOptional:\t${optionalPointer(source.configMap.optional)}\n`,
          );
        } else if (source.serviceAccountToken) {
          w.write(2, `TokenExpirationSeconds:\t${source.serviceAccountToken.expirationSeconds ?? 3607}\n`);
        }
      }
    } else if (v.nfs) {
      w.write(
        2,
        `Type:\tNFS (an NFS mount that lasts the lifetime of a pod)\n    Server:\t${str(v.nfs.server)}\n    Path:\t${str(v.nfs.path)}\n    ReadOnly:\t${goBool(v.nfs.readOnly)}\n`,
      );
    } else if (v.csi) {
      w.write(
        2,
        `Type:\tCSI (a Container Storage Interface (CSI) volume source)\n    Driver:\t${str(v.csi.driver)}\n    FSType:\t${str(v.csi.fsType)}\n    ReadOnly:\t${goBool(v.csi.readOnly)}\n`,
      );
    } else {
      w.write(1, '<unknown>\n');
    }
  }
}

/** kubectl prints the optional flag of a projected source as the Go pointer it is: `<nil>` when unset. */
function optionalPointer(value: Json): string {
  return typeof value === 'boolean' ? String(value) : '<nil>';
}

function qosClass(pod: Json): string {
  if (str(pod.status?.qosClass)) return pod.status.qosClass;
  const containers = [...list(pod.spec?.containers), ...list(pod.spec?.initContainers)];
  let anyRequest = false;
  let guaranteed = containers.length > 0;
  for (const c of containers) {
    const req = c.resources?.requests ?? {};
    const lim = c.resources?.limits ?? {};
    if (Object.keys(req).length > 0 || Object.keys(lim).length > 0) anyRequest = true;
    for (const r of ['cpu', 'memory']) {
      if (lim[r] === undefined || (req[r] !== undefined && str(req[r]) !== str(lim[r]))) guaranteed = false;
    }
  }
  if (!anyRequest) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

function printPod(w: DescribeWriter, pod: Json, events: Json[], now: Date): void {
  const spec = pod.spec ?? {};
  const status = pod.status ?? {};
  w.write(0, `Name:\t${pod.metadata.name}\n`);
  w.write(0, `Namespace:\t${str(pod.metadata.namespace)}\n`);
  if (typeof spec.priority === 'number') w.write(0, `Priority:\t${spec.priority}\n`);
  if (str(spec.priorityClassName)) w.write(0, `Priority Class Name:\t${spec.priorityClassName}\n`);
  if (str(spec.runtimeClassName)) w.write(0, `Runtime Class Name:\t${spec.runtimeClassName}\n`);
  if (str(spec.serviceAccountName)) w.write(0, `Service Account:\t${spec.serviceAccountName}\n`);
  w.write(0, str(spec.nodeName) ? `Node:\t${spec.nodeName}/${str(status.hostIP)}\n` : 'Node:\t<none>\n');
  if (status.startTime) w.write(0, `Start Time:\t${rfc1123z(status.startTime)}\n`);
  printLabels(w, 'Labels', pod.metadata.labels);
  printAnnotations(w, 'Annotations', pod.metadata.annotations);
  if (pod.metadata.deletionTimestamp && status.phase !== 'Failed' && status.phase !== 'Succeeded') {
    w.write(0, `Status:\tTerminating (lasts ${since(pod.metadata.deletionTimestamp, now)})\n`);
    w.write(0, `Termination Grace Period:\t${pod.metadata.deletionGracePeriodSeconds ?? 0}s\n`);
  } else {
    w.write(0, `Status:\t${str(status.phase)}\n`);
  }
  if (str(status.reason)) w.write(0, `Reason:\t${status.reason}\n`);
  if (str(status.message)) w.write(0, `Message:\t${status.message}\n`);
  const podSeccomp = spec.securityContext?.seccompProfile;
  if (podSeccomp) {
    w.write(0, `SeccompProfile:\t${str(podSeccomp.type)}\n`);
    if (podSeccomp.type === 'Localhost') w.write(0, `LocalhostProfile:\t${str(podSeccomp.localhostProfile)}\n`);
  }
  w.write(0, `IP:\t${str(status.podIP)}\n`);
  const ips = list(status.podIPs);
  if (ips.length === 0) w.write(0, 'IPs:\t<none>\n');
  else {
    w.write(0, 'IPs:\n');
    for (const ip of ips) w.write(1, `IP:\t${str(ip.ip)}\n`);
  }
  const controller = controllerOf(pod);
  if (controller) w.write(0, `Controlled By:\t${controller}\n`);
  if (str(status.nominatedNodeName)) w.write(0, `NominatedNodeName:\t${status.nominatedNodeName}\n`);
  if (list(spec.initContainers).length > 0) {
    describeContainers(w, 'Init Containers', list(spec.initContainers), list(status.initContainerStatuses), '');
  }
  describeContainers(w, 'Containers', list(spec.containers), list(status.containerStatuses), '');
  if (list(spec.readinessGates).length > 0) {
    w.write(0, 'Readiness Gates:\n  Type\tStatus\n');
    for (const g of list(spec.readinessGates)) {
      const c = conditionOf({ status }, g.conditionType);
      w.write(1, `${str(g.conditionType)} \t${c ? str(c.status) : '<none>'} \n`);
    }
  }
  if (list(status.conditions).length > 0) {
    w.write(0, 'Conditions:\n  Type\tStatus\n');
    for (const c of list(status.conditions)) w.write(1, `${str(c.type)} \t${str(c.status)} \n`);
  }
  describeVolumes(w, list(spec.volumes), '');
  w.write(0, `QoS Class:\t${qosClass(pod)}\n`);
  printLabels(w, 'Node-Selectors', spec.nodeSelector);
  printTolerations(w, 'Tolerations', spec.tolerations);
  describeEvents(w, events, now);
}

function describePodTemplate(w: DescribeWriter, template: Json): void {
  w.write(0, 'Pod Template:\n');
  if (!template) {
    w.write(1, '<unset>');
    return;
  }
  printLabels(w, '  Labels', template.metadata?.labels);
  if (Object.keys(template.metadata?.annotations ?? {}).length > 0)
    printAnnotations(w, '  Annotations', template.metadata.annotations);
  const spec = template.spec ?? {};
  if (str(spec.serviceAccountName)) w.write(1, `Service Account:\t${spec.serviceAccountName}\n`);
  if (list(spec.initContainers).length > 0)
    describeContainers(w, 'Init Containers', list(spec.initContainers), undefined, '  ');
  describeContainers(w, 'Containers', list(spec.containers), undefined, '  ');
  describeVolumes(w, list(spec.volumes), '  ');
  if (str(spec.priorityClassName)) w.write(1, `Priority Class Name:\t${spec.priorityClassName}\n`);
  printLabels(w, '  Node-Selectors', spec.nodeSelector);
  printTolerations(w, '  Tolerations', spec.tolerations);
}

// Nodes

const STANDARD_RESOURCES = new Set(['cpu', 'memory', 'ephemeral-storage', 'storage', 'pods']);

function podTotals(pod: Json, which: 'requests' | 'limits'): Map<string, string[]> {
  const totals = new Map<string, string[]>();
  for (const c of list(pod.spec?.containers)) {
    for (const [name, value] of Object.entries(c.resources?.[which] ?? {})) {
      totals.set(name, [...(totals.get(name) ?? []), str(value)]);
    }
  }
  // An init container's request counts when it is larger than the containers' sum (resourcehelper.PodRequests).
  for (const c of list(pod.spec?.initContainers)) {
    if (c.restartPolicy === 'Always') {
      for (const [name, value] of Object.entries(c.resources?.[which] ?? {})) {
        totals.set(name, [...(totals.get(name) ?? []), str(value)]);
      }
      continue;
    }
    for (const [name, value] of Object.entries(c.resources?.[which] ?? {})) {
      const current = sumQuantities(totals.get(name) ?? []);
      const init = parseQuantityExact(str(value));
      if (init !== undefined && (current === undefined || init.value > current.value)) totals.set(name, [str(value)]);
    }
  }
  for (const [name, value] of Object.entries(pod.spec?.overhead ?? {})) {
    totals.set(name, [...(totals.get(name) ?? []), str(value)]);
  }
  return totals;
}

function fraction(part: string | undefined, whole: Json, milli: boolean): number {
  const p = parseQuantityExact(part ?? '0');
  const w = parseQuantityExact(str(whole) || '0');
  if (!p || !w || w.value === 0) return 0;
  const scale = milli ? 1000 : 1;
  const pv = milli ? Math.ceil(p.value * scale) : Math.ceil(p.value);
  const wv = milli ? Math.ceil(w.value * scale) : Math.ceil(w.value);
  return wv === 0 ? 0 : Math.trunc((pv / wv) * 100);
}

function describeNodeResource(w: DescribeWriter, pods: Json[], node: Json, now: Date): void {
  w.write(0, `Non-terminated Pods:\t(${pods.length} in total)\n`);
  w.write(1, 'Namespace\tName\t\tCPU Requests\tCPU Limits\tMemory Requests\tMemory Limits\tAge\n');
  w.write(1, '---------\t----\t\t------------\t----------\t---------------\t-------------\t---\n');
  const allocatable =
    Object.keys(node.status?.allocatable ?? {}).length > 0 ? node.status.allocatable : (node.status?.capacity ?? {});
  const sum = (values: string[] | undefined) => formatQuantity(sumQuantities(values ?? [])?.text ?? '0');
  for (const pod of pods) {
    const req = podTotals(pod, 'requests');
    const lim = podTotals(pod, 'limits');
    const cpuReq = sum(req.get('cpu'));
    const cpuLim = sum(lim.get('cpu'));
    const memReq = sum(req.get('memory'));
    const memLim = sum(lim.get('memory'));
    w.write(
      1,
      `${str(pod.metadata.namespace)}\t${pod.metadata.name}\t\t${cpuReq} (${fraction(cpuReq, allocatable.cpu, true)}%)\t${cpuLim} (${fraction(cpuLim, allocatable.cpu, true)}%)\t${memReq} (${fraction(memReq, allocatable.memory, false)}%)\t${memLim} (${fraction(memLim, allocatable.memory, false)}%)\t${since(pod.metadata.creationTimestamp, now)}\n`,
    );
  }
  w.write(0, 'Allocated resources:\n  (Total limits may be over 100 percent, i.e., overcommitted.)\n');
  w.write(1, 'Resource\tRequests\tLimits\n');
  w.write(1, '--------\t--------\t------\n');
  const totals = (which: 'requests' | 'limits') => {
    const all = new Map<string, string[]>();
    for (const pod of pods) for (const [k, v] of podTotals(pod, which)) all.set(k, [...(all.get(k) ?? []), ...v]);
    return all;
  };
  const reqs = totals('requests');
  const lims = totals('limits');
  for (const [name, milli] of [
    ['cpu', true],
    ['memory', false],
    ['ephemeral-storage', false],
  ] as const) {
    const r = sum(reqs.get(name));
    const l = sum(lims.get(name));
    w.write(
      1,
      `${name}\t${r} (${fraction(r, allocatable[name], milli)}%)\t${l} (${fraction(l, allocatable[name], milli)}%)\n`,
    );
  }
  const keys = Object.keys(allocatable).sort();
  for (const name of keys.filter((k) => k.startsWith('hugepages-'))) {
    const r = sum(reqs.get(name));
    const l = sum(lims.get(name));
    w.write(
      1,
      `${name}\t${r} (${fraction(r, allocatable[name], false)}%)\t${l} (${fraction(l, allocatable[name], false)}%)\n`,
    );
  }
  for (const name of keys.filter(
    (k) =>
      !k.startsWith('hugepages-') &&
      !STANDARD_RESOURCES.has(k) &&
      !k.startsWith('requests.') &&
      !k.startsWith('limits.'),
  )) {
    w.write(1, `${name}\t${sum(reqs.get(name))}\t${sum(lims.get(name))}\n`);
  }
}

async function describeNode(ctx: DescribeContext, node: KubeObject): Promise<string> {
  const w = new DescribeWriter();
  const n: Json = node;
  const pods = (
    await ctx.reader.list(
      {
        kind: 'pods',
        fieldSelector: `spec.nodeName=${node.metadata.name},status.phase!=Succeeded,status.phase!=Failed`,
      },
      ctx.signal,
    )
  ).sort((a, b) =>
    `${a.metadata.namespace ?? ''}/${a.metadata.name}` < `${b.metadata.namespace ?? ''}/${b.metadata.name}` ? -1 : 1,
  );
  const byUid = await eventsFor(ctx, node);
  const byName = await eventsFor(ctx, node, { uid: node.metadata.name });
  const labels = node.metadata.labels ?? {};
  const roles = [
    ...new Set(
      Object.keys(labels)
        .filter((k) => k.startsWith('node-role.kubernetes.io/') && k.length > 'node-role.kubernetes.io/'.length)
        .map((k) => k.slice('node-role.kubernetes.io/'.length))
        .concat(labels['kubernetes.io/role'] ? [labels['kubernetes.io/role']] : []),
    ),
  ].sort();
  w.write(0, `Name:\t${node.metadata.name}\n`);
  w.write(0, `Roles:\t${roles.length > 0 ? roles.join(',') : '<none>'}\n`);
  printLabels(w, 'Labels', labels);
  printAnnotations(w, 'Annotations', node.metadata.annotations);
  w.write(0, `CreationTimestamp:\t${rfc1123z(node.metadata.creationTimestamp)}\n`);
  printTaints(w, 'Taints', n.spec?.taints);
  w.write(0, `Unschedulable:\t${goBool(n.spec?.unschedulable)}\n`);
  try {
    const lease: Json = await ctx.reader.get(
      { kind: 'leases', namespace: 'kube-node-lease', name: node.metadata.name },
      ctx.signal,
    );
    w.write(0, 'Lease:\n');
    w.write(1, `HolderIdentity:\t${str(lease.spec?.holderIdentity) || '<unset>'}\n`);
    w.write(1, `AcquireTime:\t${lease.spec?.acquireTime ? rfc1123z(lease.spec.acquireTime) : '<unset>'}\n`);
    w.write(1, `RenewTime:\t${lease.spec?.renewTime ? rfc1123z(lease.spec.renewTime) : '<unset>'}\n`);
  } catch (error) {
    if (!(error instanceof ClusterReadError)) throw error;
    const why = error.reason === 'not-found' ? 'not found' : error.message;
    w.write(0, `Lease:\tFailed to get lease: leases.coordination.k8s.io "${node.metadata.name}" ${why}\n`);
  }
  const conditions = list(n.status?.conditions);
  if (conditions.length > 0) {
    w.write(0, 'Conditions:\n  Type\tStatus\tLastHeartbeatTime\tLastTransitionTime\tReason\tMessage\n');
    w.write(1, '----\t------\t-----------------\t------------------\t------\t-------\n');
    for (const c of conditions) {
      w.write(
        1,
        `${str(c.type)} \t${str(c.status)} \t${rfc1123z(c.lastHeartbeatTime)} \t${rfc1123z(c.lastTransitionTime)} \t${str(c.reason)} \t${str(c.message)}\n`,
      );
    }
  }
  w.write(0, 'Addresses:\n');
  for (const a of list(n.status?.addresses)) w.write(1, `${str(a.type)}:\t${str(a.address)}\n`);
  const resourceList = (map: Json) => {
    for (const key of Object.keys(map).sort()) w.write(0, `  ${key}:\t${formatQuantity(str(map[key]))}\n`);
  };
  if (Object.keys(n.status?.capacity ?? {}).length > 0) {
    w.write(0, 'Capacity:\n');
    resourceList(n.status.capacity);
  }
  if (Object.keys(n.status?.allocatable ?? {}).length > 0) {
    w.write(0, 'Allocatable:\n');
    resourceList(n.status.allocatable);
  }
  const info = n.status?.nodeInfo ?? {};
  w.write(0, 'System Info:\n');
  w.write(0, `  Machine ID:\t${str(info.machineID)}\n`);
  w.write(0, `  System UUID:\t${str(info.systemUUID)}\n`);
  w.write(0, `  Boot ID:\t${str(info.bootID)}\n`);
  w.write(0, `  Kernel Version:\t${str(info.kernelVersion)}\n`);
  w.write(0, `  OS Image:\t${str(info.osImage)}\n`);
  w.write(0, `  Operating System:\t${str(info.operatingSystem)}\n`);
  w.write(0, `  Architecture:\t${str(info.architecture)}\n`);
  w.write(0, `  Container Runtime Version:\t${str(info.containerRuntimeVersion)}\n`);
  w.write(0, `  Kubelet Version:\t${str(info.kubeletVersion)}\n`);
  w.write(0, `  Kube-Proxy Version:\t${str(info.kubeProxyVersion)}\n`);
  if (str(n.spec?.podCIDR)) w.write(0, `PodCIDR:\t${n.spec.podCIDR}\n`);
  if (list(n.spec?.podCIDRs).length > 0) w.write(0, `PodCIDRs:\t${list(n.spec.podCIDRs).join(',')}\n`);
  if (str(n.spec?.providerID)) w.write(0, `ProviderID:\t${n.spec.providerID}\n`);
  describeNodeResource(w, pods, n, ctx.now);
  describeEvents(w, [...byUid, ...byName], ctx.now);
  return w.text();
}

// Workloads

async function podStatusCounts(ctx: DescribeContext, owner: KubeObject, selector: Json): Promise<number[]> {
  const text = selectorString(selector);
  const pods = await ctx.reader.list(
    {
      kind: 'pods',
      namespace: owner.metadata.namespace ?? '',
      ...(text && text !== '<none>' ? { labelSelector: text } : {}),
    },
    ctx.signal,
  );
  const counts = [0, 0, 0, 0];
  for (const pod of pods) {
    const ref = list(pod.metadata.ownerReferences).find((r: Json) => r.controller === true);
    if (!ref || ref.uid !== owner.metadata.uid) continue;
    const phase = pod.status?.phase;
    const index = ['Running', 'Pending', 'Succeeded', 'Failed'].indexOf(phase);
    if (index >= 0) counts[index] = (counts[index] ?? 0) + 1;
  }
  return counts;
}

function conditionsTable(w: DescribeWriter, conditions: Json[]): void {
  if (conditions.length === 0) return;
  w.write(0, 'Conditions:\n  Type\tStatus\tReason\n');
  w.write(1, '----\t------\t------\n');
  for (const c of conditions) w.write(1, `${str(c.type)} \t${str(c.status)}\t${str(c.reason)}\n`);
}

function withoutHash(template: Json): string {
  const copy = structuredClone(template ?? {});
  if (copy.metadata?.labels) delete copy.metadata.labels['pod-template-hash'];
  const sorted = (v: Json): Json =>
    Array.isArray(v)
      ? v.map(sorted)
      : v && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, sorted(v[k])]),
          )
        : v;
  return JSON.stringify(sorted(copy));
}

async function describeDeployment(ctx: DescribeContext, d: KubeObject, events: Json[]): Promise<string> {
  const w = new DescribeWriter();
  const o: Json = d;
  const spec = o.spec ?? {};
  const status = o.status ?? {};
  const replicaSets = (
    await ctx.reader.list(
      { kind: 'replicasets', namespace: d.metadata.namespace ?? '', labelSelector: selectorString(spec.selector) },
      ctx.signal,
    )
  ).filter((rs) =>
    list(rs.metadata.ownerReferences).some((r: Json) => r.controller === true && r.uid === d.metadata.uid),
  );
  const template = withoutHash(spec.template);
  const sortedRs = [...replicaSets].sort(
    (a, b) => Date.parse(str(a.metadata.creationTimestamp)) - Date.parse(str(b.metadata.creationTimestamp)),
  );
  const newRs = sortedRs.find((rs) => withoutHash(rs.spec?.template) === template);
  const oldRs = replicaSets.filter((rs) => rs !== newRs);
  w.write(0, `Name:\t${d.metadata.name}\n`);
  w.write(0, `Namespace:\t${str(d.metadata.namespace)}\n`);
  w.write(0, `CreationTimestamp:\t${rfc1123z(d.metadata.creationTimestamp)}\n`);
  printLabels(w, 'Labels', d.metadata.labels);
  printAnnotations(w, 'Annotations', d.metadata.annotations);
  w.write(0, `Selector:\t${selectorString(spec.selector)}\n`);
  w.write(
    0,
    `Replicas:\t${spec.replicas ?? 1} desired | ${status.updatedReplicas ?? 0} updated | ${status.replicas ?? 0} total | ${status.availableReplicas ?? 0} available | ${status.unavailableReplicas ?? 0} unavailable\n`,
  );
  w.write(0, `StrategyType:\t${str(spec.strategy?.type)}\n`);
  w.write(0, `MinReadySeconds:\t${spec.minReadySeconds ?? 0}\n`);
  if (spec.strategy?.rollingUpdate) {
    const ru = spec.strategy.rollingUpdate;
    w.write(
      0,
      `RollingUpdateStrategy:\t${str(ru.maxUnavailable ?? '25%')} max unavailable, ${str(ru.maxSurge ?? '25%')} max surge\n`,
    );
  }
  describePodTemplate(w, spec.template);
  conditionsTable(w, list(status.conditions));
  const rsText = (items: KubeObject[]) =>
    items.length === 0
      ? '<none>'
      : items
          .map(
            (rs) =>
              `${rs.metadata.name} (${(rs as Json).status?.replicas ?? 0}/${(rs as Json).spec?.replicas ?? 1} replicas created)`,
          )
          .join(', ');
  if (oldRs.length > 0 || newRs) {
    w.write(0, `OldReplicaSets:\t${rsText(oldRs)}\n`);
    w.write(0, `NewReplicaSet:\t${rsText(newRs ? [newRs] : [])}\n`);
  }
  describeEvents(w, events, ctx.now);
  return w.text();
}

async function describeReplicaSet(ctx: DescribeContext, rs: KubeObject, events: Json[]): Promise<string> {
  const w = new DescribeWriter();
  const o: Json = rs;
  const [running, waiting, succeeded, failed] = await podStatusCounts(ctx, rs, o.spec?.selector);
  w.write(0, `Name:\t${rs.metadata.name}\n`);
  w.write(0, `Namespace:\t${str(rs.metadata.namespace)}\n`);
  w.write(0, `Selector:\t${formatLabelSelector(o.spec?.selector)}\n`);
  printLabels(w, 'Labels', rs.metadata.labels);
  printAnnotations(w, 'Annotations', rs.metadata.annotations);
  const controller = controllerOf(rs);
  if (controller) w.write(0, `Controlled By:\t${controller}\n`);
  w.write(0, `Replicas:\t${o.status?.replicas ?? 0} current / ${o.spec?.replicas ?? 1} desired\n`);
  w.write(0, 'Pods Status:\t');
  w.write(0, `${running} Running / ${waiting} Waiting / ${succeeded} Succeeded / ${failed} Failed\n`);
  describePodTemplate(w, o.spec?.template);
  conditionsTable(w, list(o.status?.conditions));
  describeEvents(w, events, ctx.now);
  return w.text();
}

async function describeStatefulSet(ctx: DescribeContext, sts: KubeObject, events: Json[]): Promise<string> {
  const w = new DescribeWriter();
  const o: Json = sts;
  const spec = o.spec ?? {};
  const [running, waiting, succeeded, failed] = await podStatusCounts(ctx, sts, spec.selector);
  w.write(0, `Name:\t${sts.metadata.name}\n`);
  w.write(0, `Namespace:\t${str(sts.metadata.namespace)}\n`);
  w.write(0, `CreationTimestamp:\t${rfc1123z(sts.metadata.creationTimestamp)}\n`);
  w.write(0, `Selector:\t${selectorString(spec.selector)}\n`);
  printLabels(w, 'Labels', sts.metadata.labels);
  printAnnotations(w, 'Annotations', sts.metadata.annotations);
  if (str(spec.serviceName)) w.write(0, `Service Name:\t${spec.serviceName}\n`);
  if (str(spec.podManagementPolicy)) w.write(0, `Pod Management Policy:\t${spec.podManagementPolicy}\n`);
  w.write(0, `Replicas:\t${spec.replicas ?? 1} desired | ${o.status?.replicas ?? 0} total\n`);
  w.write(0, `Update Strategy:\t${str(spec.updateStrategy?.type)}\n`);
  const ru = spec.updateStrategy?.rollingUpdate;
  if (ru && typeof ru.partition === 'number') {
    w.write(1, `Partition:\t${ru.partition}\n`);
    if (ru.maxUnavailable !== undefined) w.write(1, `MaxUnavailable:\t${str(ru.maxUnavailable)}\n`);
  }
  if (spec.persistentVolumeClaimRetentionPolicy) {
    w.write(0, 'Persistent Volume Claim Retention Policy:\n');
    w.write(1, `WhenDeleted:\t${str(spec.persistentVolumeClaimRetentionPolicy.whenDeleted)}\n`);
    w.write(1, `WhenScaled:\t${str(spec.persistentVolumeClaimRetentionPolicy.whenScaled)}\n`);
  }
  w.write(0, `Pods Status:\t${running} Running / ${waiting} Waiting / ${succeeded} Succeeded / ${failed} Failed\n`);
  describePodTemplate(w, spec.template);
  const claims = list(spec.volumeClaimTemplates);
  if (claims.length === 0) w.write(0, 'Volume Claims:\t<none>\n');
  else {
    w.write(0, 'Volume Claims:\n');
    for (const pvc of claims) {
      w.write(1, `Name:\t${str(pvc.metadata?.name)}\n`);
      w.write(1, `StorageClass:\t${str(pvc.spec?.storageClassName)}\n`);
      printLabels(w, 'Labels', pvc.metadata?.labels, '  ');
      printLabels(w, 'Annotations', pvc.metadata?.annotations, '  ');
      w.write(1, `Capacity:\t${str(pvc.spec?.resources?.requests?.storage)}\n`);
      w.write(1, `Access Modes:\t[${list(pvc.spec?.accessModes).join(' ')}]\n`);
    }
  }
  describeEvents(w, events, ctx.now);
  return w.text();
}

async function describeJob(ctx: DescribeContext, job: KubeObject, events: Json[]): Promise<string> {
  const w = new DescribeWriter();
  const o: Json = job;
  const spec = o.spec ?? {};
  const status = o.status ?? {};
  w.write(0, `Name:\t${job.metadata.name}\n`);
  w.write(0, `Namespace:\t${str(job.metadata.namespace)}\n`);
  w.write(0, `Selector:\t${selectorString(spec.selector)}\n`);
  printLabels(w, 'Labels', job.metadata.labels);
  printAnnotations(w, 'Annotations', job.metadata.annotations);
  const controller = controllerOf(job);
  if (controller) w.write(0, `Controlled By:\t${controller}\n`);
  if (typeof spec.parallelism === 'number') w.write(0, `Parallelism:\t${spec.parallelism}\n`);
  w.write(0, typeof spec.completions === 'number' ? `Completions:\t${spec.completions}\n` : 'Completions:\t<unset>\n');
  if (str(spec.completionMode)) w.write(0, `Completion Mode:\t${spec.completionMode}\n`);
  if (typeof spec.suspend === 'boolean') w.write(0, `Suspend:\t${spec.suspend}\n`);
  if (typeof spec.backoffLimit === 'number') w.write(0, `Backoff Limit:\t${spec.backoffLimit}\n`);
  if (typeof spec.ttlSecondsAfterFinished === 'number')
    w.write(0, `TTL Seconds After Finished:\t${spec.ttlSecondsAfterFinished}\n`);
  if (status.startTime) w.write(0, `Start Time:\t${rfc1123z(status.startTime)}\n`);
  if (status.completionTime) w.write(0, `Completed At:\t${rfc1123z(status.completionTime)}\n`);
  if (status.startTime && status.completionTime) {
    w.write(0, `Duration:\t${since(status.startTime, new Date(Date.parse(status.completionTime)))}\n`);
  }
  if (typeof spec.activeDeadlineSeconds === 'number')
    w.write(0, `Active Deadline Seconds:\t${spec.activeDeadlineSeconds}s\n`);
  w.write(
    0,
    typeof status.ready === 'number'
      ? `Pods Statuses:\t${status.active ?? 0} Active (${status.ready} Ready) / ${status.succeeded ?? 0} Succeeded / ${status.failed ?? 0} Failed\n`
      : `Pods Statuses:\t${status.active ?? 0} Active / ${status.succeeded ?? 0} Succeeded / ${status.failed ?? 0} Failed\n`,
  );
  describePodTemplate(w, spec.template);
  describeEvents(w, events, ctx.now);
  return w.text();
}

// Networking and storage

async function describeService(ctx: DescribeContext, svc: KubeObject, events: Json[]): Promise<string> {
  const w = new DescribeWriter();
  const o: Json = svc;
  const spec = o.spec ?? {};
  const slices: Json[] = await ctx.reader
    .list(
      {
        kind: 'endpointslices',
        namespace: svc.metadata.namespace ?? '',
        labelSelector: `kubernetes.io/service-name=${svc.metadata.name}`,
      },
      ctx.signal,
    )
    .catch((error: unknown) => {
      if (error instanceof ClusterReadError) return [];
      throw error;
    });
  w.write(0, `Name:\t${svc.metadata.name}\n`);
  w.write(0, `Namespace:\t${str(svc.metadata.namespace)}\n`);
  printLabels(w, 'Labels', svc.metadata.labels);
  printAnnotations(w, 'Annotations', svc.metadata.annotations);
  w.write(0, `Selector:\t${Object.keys(spec.selector ?? {}).length === 0 ? '' : formatMap(spec.selector)}\n`);
  w.write(0, `Type:\t${str(spec.type)}\n`);
  if (str(spec.ipFamilyPolicy)) w.write(0, `IP Family Policy:\t${spec.ipFamilyPolicy}\n`);
  w.write(0, `IP Families:\t${list(spec.ipFamilies).length > 0 ? list(spec.ipFamilies).join(',') : '<none>'}\n`);
  w.write(0, `IP:\t${str(spec.clusterIP)}\n`);
  w.write(0, `IPs:\t${list(spec.clusterIPs).length > 0 ? list(spec.clusterIPs).join(',') : '<none>'}\n`);
  if (list(spec.externalIPs).length > 0) w.write(0, `External IPs:\t${list(spec.externalIPs).join(',')}\n`);
  if (str(spec.loadBalancerIP)) w.write(0, `Desired LoadBalancer IP:\t${spec.loadBalancerIP}\n`);
  if (str(spec.externalName)) w.write(0, `External Name:\t${spec.externalName}\n`);
  const lb = list(o.status?.loadBalancer?.ingress);
  if (lb.length > 0) w.write(0, `LoadBalancer Ingress:\t${lb.map((i: Json) => i.ip || i.hostname).join(', ')}\n`);
  for (const sp of list(spec.ports)) {
    const name = str(sp.name) || '<unset>';
    const protocol = str(sp.protocol) || 'TCP';
    w.write(0, `Port:\t${name}\t${sp.port}/${protocol}\n`);
    w.write(0, `TargetPort:\t${str(sp.targetPort ?? sp.port)}/${protocol}\n`);
    if (str(sp.appProtocol)) w.write(0, `AppProtocol:\t${sp.appProtocol}\n`);
    if (sp.nodePort) w.write(0, `NodePort:\t${name}\t${sp.nodePort}/${protocol}\n`);
    w.write(0, `Endpoints:\t${formatEndpointSlices(slices, str(sp.name))}\n`);
  }
  w.write(0, `Session Affinity:\t${str(spec.sessionAffinity)}\n`);
  if (str(spec.externalTrafficPolicy)) w.write(0, `External Traffic Policy:\t${spec.externalTrafficPolicy}\n`);
  if (str(spec.internalTrafficPolicy)) w.write(0, `Internal Traffic Policy:\t${spec.internalTrafficPolicy}\n`);
  if (spec.healthCheckNodePort) w.write(0, `HealthCheck NodePort:\t${spec.healthCheckNodePort}\n`);
  if (list(spec.loadBalancerSourceRanges).length > 0) {
    w.write(0, `LoadBalancer Source Ranges:\t${list(spec.loadBalancerSourceRanges).join(',')}\n`);
  }
  describeEvents(w, events, ctx.now);
  return w.text();
}

function formatEndpointSlices(slices: Json[], portName: string): string {
  if (slices.length === 0) return '<none>';
  const shown: string[] = [];
  const max = 3;
  let more = false;
  let count = 0;
  for (const slice of slices) {
    const endpoints = list(slice.endpoints);
    const ready = (e: Json) =>
      e.conditions?.ready === undefined || e.conditions?.ready === null || e.conditions.ready === true;
    if (list(slice.ports).length === 0) {
      for (const e of endpoints) {
        if (shown.length === max) more = true;
        if (!ready(e)) continue;
        if (!more) shown.push(str(list(e.addresses)[0]));
        count++;
      }
      continue;
    }
    for (const port of list(slice.ports)) {
      if (str(port.name) !== portName) continue;
      for (const e of endpoints) {
        if (shown.length === max) more = true;
        if (!ready(e)) continue;
        const addr = str(list(e.addresses)[0]);
        if (!more) shown.push(addr.includes(':') ? `[${addr}]:${port.port}` : `${addr}:${port.port}`);
        count++;
      }
    }
  }
  return more ? `${shown.join(',')} + ${count - max} more...` : shown.join(',');
}

function describeEndpoints(ep: KubeObject, events: Json[], now: Date): string {
  const w = new DescribeWriter();
  const o: Json = ep;
  w.write(0, `Name:\t${ep.metadata.name}\n`);
  w.write(0, `Namespace:\t${str(ep.metadata.namespace)}\n`);
  printLabels(w, 'Labels', ep.metadata.labels);
  printAnnotations(w, 'Annotations', ep.metadata.annotations);
  w.write(0, 'Subsets:\n');
  for (const subset of list(o.subsets)) {
    const ready = list(subset.addresses)
      .map((a: Json) => a.ip)
      .join(',');
    const notReady = list(subset.notReadyAddresses)
      .map((a: Json) => a.ip)
      .join(',');
    w.write(1, `Addresses:\t${ready || '<none>'}\n`);
    w.write(1, `NotReadyAddresses:\t${notReady || '<none>'}\n`);
    if (list(subset.ports).length > 0) {
      w.write(1, 'Ports:\n');
      w.write(2, 'Name\tPort\tProtocol\n');
      w.write(2, '----\t----\t--------\n');
      for (const p of list(subset.ports))
        w.write(2, `${str(p.name) || '<unset>'}\t${p.port}\t${str(p.protocol) || 'TCP'}\n`);
    }
    w.write(0, '\n');
  }
  describeEvents(w, events, now);
  return w.text();
}

async function describePvc(ctx: DescribeContext, pvc: KubeObject, events: Json[]): Promise<string> {
  const w = new DescribeWriter();
  const o: Json = pvc;
  const pods = (await ctx.reader.list({ kind: 'pods', namespace: pvc.metadata.namespace ?? '' }, ctx.signal)).filter(
    (p) => list(p.spec?.volumes).some((v: Json) => v.persistentVolumeClaim?.claimName === pvc.metadata.name),
  );
  w.write(0, `Name:\t${pvc.metadata.name}\n`);
  w.write(0, `Namespace:\t${str(pvc.metadata.namespace)}\n`);
  w.write(
    0,
    `StorageClass:\t${str(o.spec?.storageClassName ?? pvc.metadata.annotations?.['volume.beta.kubernetes.io/storage-class'])}\n`,
  );
  w.write(
    0,
    pvc.metadata.deletionTimestamp
      ? `Status:\tTerminating (lasts ${since(pvc.metadata.deletionTimestamp, ctx.now)})\n`
      : `Status:\t${str(o.status?.phase)}\n`,
  );
  w.write(0, `Volume:\t${str(o.spec?.volumeName)}\n`);
  printLabels(w, 'Labels', pvc.metadata.labels);
  printAnnotations(w, 'Annotations', pvc.metadata.annotations);
  w.write(0, `Finalizers:\t[${list(pvc.metadata['finalizers']).join(' ')}]\n`);
  const bound = str(o.spec?.volumeName) !== '';
  w.write(0, `Capacity:\t${bound ? formatQuantity(str(o.status?.capacity?.storage)) : ''}\n`);
  w.write(0, `Access Modes:\t${bound ? accessModes(o.status?.accessModes) : ''}\n`);
  if (str(o.spec?.volumeMode)) w.write(0, `VolumeMode:\t${o.spec.volumeMode}\n`);
  if (o.spec?.dataSource) {
    w.write(0, 'DataSource:\n');
    if (str(o.spec.dataSource.apiGroup)) w.write(1, `APIGroup:\t${o.spec.dataSource.apiGroup}\n`);
    w.write(1, `Kind:\t${str(o.spec.dataSource.kind)}\n`);
    w.write(1, `Name:\t${str(o.spec.dataSource.name)}\n`);
  }
  w.write(0, 'Used By:\t');
  if (pods.length === 0) w.write(0, '<none>\n');
  else {
    pods.forEach((p, i) => {
      w.write(0, `${i === 0 ? '' : '\t'}${p.metadata.name}\n`);
    });
  }
  const conditions = list(o.status?.conditions);
  if (conditions.length > 0) {
    w.write(0, 'Conditions:\n');
    w.write(1, 'Type\tStatus\tLastProbeTime\tLastTransitionTime\tReason\tMessage\n');
    w.write(1, '----\t------\t-----------------\t------------------\t------\t-------\n');
    for (const c of conditions) {
      w.write(
        1,
        `${str(c.type)} \t${str(c.status)} \t${rfc1123z(c.lastProbeTime)} \t${rfc1123z(c.lastTransitionTime)} \t${str(c.reason)} \t${str(c.message)}\n`,
      );
    }
  }
  describeEvents(w, events, ctx.now);
  return w.text();
}

function describePv(pv: KubeObject, events: Json[], now: Date): string {
  const w = new DescribeWriter();
  const o: Json = pv;
  const spec = o.spec ?? {};
  w.write(0, `Name:\t${pv.metadata.name}\n`);
  printLabels(w, 'Labels', pv.metadata.labels);
  printAnnotations(w, 'Annotations', pv.metadata.annotations);
  w.write(0, `Finalizers:\t[${list(pv.metadata['finalizers']).join(' ')}]\n`);
  w.write(0, `StorageClass:\t${str(spec.storageClassName)}\n`);
  w.write(
    0,
    pv.metadata.deletionTimestamp
      ? `Status:\tTerminating (lasts ${since(pv.metadata.deletionTimestamp, now)})\n`
      : `Status:\t${str(o.status?.phase)}\n`,
  );
  w.write(0, `Claim:\t${spec.claimRef ? `${str(spec.claimRef.namespace)}/${str(spec.claimRef.name)}` : ''}\n`);
  w.write(0, `Reclaim Policy:\t${str(spec.persistentVolumeReclaimPolicy)}\n`);
  w.write(0, `Access Modes:\t${accessModes(spec.accessModes)}\n`);
  if (str(spec.volumeMode)) w.write(0, `VolumeMode:\t${spec.volumeMode}\n`);
  w.write(0, `Capacity:\t${formatQuantity(str(spec.capacity?.storage))}\n`);
  const terms = list(spec.nodeAffinity?.required?.nodeSelectorTerms);
  if (spec.nodeAffinity) {
    w.write(0, 'Node Affinity:\t\n');
    w.write(1, 'Required Terms:\t');
    if (terms.length === 0) w.write(0, '<none>\n');
    else {
      terms.forEach((term: Json, i: number) => {
        const exprs = list(term.matchExpressions).map(
          (e: Json) =>
            `${e.key} ${e.operator === 'In' ? 'in' : e.operator === 'NotIn' ? 'not in' : e.operator} [${list(e.values).join(' ')}]`,
        );
        w.write(0, `${i === 0 ? '' : '    \t'}Term ${i}:\t${exprs.join('\n')}\n`);
      });
    }
  } else {
    w.write(0, 'Node Affinity:\t<none>\n');
  }
  w.write(0, `Message:\t${str(o.status?.message)}\n`);
  w.write(0, 'Source:\n');
  if (spec.csi) {
    const c = spec.csi;
    w.write(
      2,
      `Type:\tCSI (a Container Storage Interface (CSI) volume source)\n    Driver:\t${str(c.driver)}\n    FSType:\t${str(c.fsType)}\n    VolumeHandle:\t${str(c.volumeHandle)}\n    ReadOnly:\t${goBool(c.readOnly)}\n`,
    );
    const attrs = c.volumeAttributes ?? {};
    const keys = Object.keys(attrs).sort();
    w.write(2, 'VolumeAttributes:\t');
    if (keys.length === 0) w.write(0, '<none>\n');
    keys.forEach((k, i) => {
      w.write(0, `${i === 0 ? '' : '        \t'}   ${k}=${attrs[k]}\n`);
    });
  } else if (spec.nfs) {
    w.write(
      2,
      `Type:\tNFS (an NFS mount that lasts the lifetime of a pod)\n    Server:\t${str(spec.nfs.server)}\n    Path:\t${str(spec.nfs.path)}\n    ReadOnly:\t${goBool(spec.nfs.readOnly)}\n`,
    );
  } else if (spec.hostPath) {
    w.write(
      2,
      `Type:\tHostPath (bare host directory volume)\n    Path:\t${str(spec.hostPath.path)}\n    HostPathType:\t${str(spec.hostPath.type) || '<none>'}\n`,
    );
  } else if (spec.local) {
    w.write(
      2,
      `Type:\tLocalVolume (a persistent volume backed by local storage on a node)\n    Path:\t${str(spec.local.path)}\n`,
    );
  } else if (spec.awsElasticBlockStore) {
    const a = spec.awsElasticBlockStore;
    w.write(
      2,
      `Type:\tAWSElasticBlockStore (a Persistent Disk resource in AWS)\n    VolumeID:\t${str(a.volumeID)}\n    FSType:\t${str(a.fsType)}\n    Partition:\t${a.partition ?? 0}\n    ReadOnly:\t${goBool(a.readOnly)}\n`,
    );
  } else {
    w.write(1, '<unknown>\n');
  }
  describeEvents(w, events, now);
  return w.text();
}

async function describeIngress(ctx: DescribeContext, ing: KubeObject, events: Json[]): Promise<string> {
  const w = new DescribeWriter();
  const o: Json = ing;
  const spec = o.spec ?? {};
  const namespace = ing.metadata.namespace ?? '';
  const backend = async (b: Json): Promise<string> => {
    if (b?.resource)
      return `APIGroup: ${str(b.resource.apiGroup)}, Kind: ${str(b.resource.kind)}, Name: ${str(b.resource.name)}`;
    const svcName = str(b?.service?.name);
    const port = b?.service?.port;
    const portText = port?.name ? str(port.name) : str(port?.number);
    let endpoints = `<error: endpoints "${svcName}" not found>`;
    try {
      const svc: Json = await ctx.reader.get({ kind: 'services', namespace, name: svcName }, ctx.signal);
      const slices = await ctx.reader.list(
        { kind: 'endpointslices', namespace, labelSelector: `kubernetes.io/service-name=${svcName}` },
        ctx.signal,
      );
      const match = list(svc.spec?.ports).find((p: Json) =>
        port?.name ? p.name === port.name : p.port === port?.number,
      );
      endpoints = match ? formatEndpointSlices(slices, str(match.name)) : '<none>';
    } catch (error) {
      if (!(error instanceof ClusterReadError)) throw error;
      endpoints = `<error: services "${svcName}" not found>`;
    }
    return `${svcName}:${portText} (${endpoints})`;
  };
  w.write(0, `Name:\t${ing.metadata.name}\n`);
  printLabels(w, 'Labels', ing.metadata.labels);
  w.write(0, `Namespace:\t${namespace}\n`);
  const addresses = [
    ...new Set(
      list(o.status?.loadBalancer?.ingress)
        .map((i: Json) => str(i.ip) || str(i.hostname))
        .filter(Boolean),
    ),
  ].sort();
  w.write(0, `Address:\t${addresses.join(',')}\n`);
  w.write(0, `Ingress Class:\t${str(spec.ingressClassName) || '<none>'}\n`);
  const def = spec.defaultBackend ? await backend(spec.defaultBackend) : '<default>';
  w.write(0, `Default backend:\t${def}\n`);
  if (list(spec.tls).length > 0) {
    w.write(0, 'TLS:\n');
    for (const t of list(spec.tls)) {
      if (!str(t.secretName)) w.write(1, `SNI routes ${list(t.hosts).join(',')}\n`);
      else w.write(1, `${t.secretName} terminates ${list(t.hosts).join(',')}\n`);
    }
  }
  w.write(0, 'Rules:\n  Host\tPath\tBackends\n');
  w.write(1, '----\t----\t--------\n');
  let count = 0;
  for (const rule of list(spec.rules)) {
    if (!rule.http) continue;
    count++;
    w.write(1, `${str(rule.host) || '*'}\t\n`);
    for (const path of list(rule.http.paths)) w.write(2, `\t${str(path.path)} \t${await backend(path.backend)}\n`);
  }
  if (count === 0) w.write(1, `*\t*\t${def}\n`);
  printAnnotations(w, 'Annotations', ing.metadata.annotations);
  describeEvents(w, events, ctx.now);
  return w.text();
}

function describeHpa(hpa: KubeObject, events: Json[], now: Date): string {
  const w = new DescribeWriter();
  const o: Json = hpa;
  const spec = o.spec ?? {};
  const status = o.status ?? {};
  const current = list(status.currentMetrics);
  w.write(0, `Name:\t${hpa.metadata.name}\n`);
  w.write(0, `Namespace:\t${str(hpa.metadata.namespace)}\n`);
  printLabels(w, 'Labels', hpa.metadata.labels);
  printAnnotations(w, 'Annotations', hpa.metadata.annotations);
  w.write(0, `CreationTimestamp:\t${rfc1123z(hpa.metadata.creationTimestamp)}\n`);
  w.write(0, `Reference:\t${str(spec.scaleTargetRef?.kind)}/${str(spec.scaleTargetRef?.name)}\n`);
  w.write(0, 'Metrics:\t( current / target )\n');
  list(spec.metrics).forEach((metric: Json, i: number) => {
    const cur = current[i];
    if (metric.type === 'Resource' && metric.resource) {
      w.write(1, `resource ${str(metric.resource.name)} on pods`);
      const target = metric.resource.target ?? {};
      if (target.averageValue !== undefined) {
        w.write(
          0,
          `:\t${cur?.resource ? str(cur.resource.current?.averageValue) : '<unknown>'} / ${str(target.averageValue)}\n`,
        );
      } else {
        const c = cur?.resource?.current;
        const currentText =
          c && typeof c.averageUtilization === 'number'
            ? `${c.averageUtilization}% (${str(c.averageValue)})`
            : '<unknown>';
        const targetText = typeof target.averageUtilization === 'number' ? `${target.averageUtilization}%` : '<auto>';
        w.write(1, `(as a percentage of request):\t${currentText} / ${targetText}\n`);
      }
    } else if (metric.type === 'Pods' && metric.pods) {
      w.write(
        1,
        `${JSON.stringify(str(metric.pods.metric?.name))} on pods:\t${cur?.pods ? str(cur.pods.current?.averageValue) : '<unknown>'} / ${str(metric.pods.target?.averageValue)}\n`,
      );
    } else {
      w.write(1, `<unknown metric type ${JSON.stringify(str(metric.type))}>\n`);
    }
  });
  w.write(0, `Min replicas:\t${typeof spec.minReplicas === 'number' ? spec.minReplicas : '<unset>'}\n`);
  w.write(0, `Max replicas:\t${spec.maxReplicas ?? 0}\n`);
  w.write(0, `${str(spec.scaleTargetRef?.kind)} pods:\t`);
  w.write(0, `${status.currentReplicas ?? 0} current / ${status.desiredReplicas ?? 0} desired\n`);
  const conditions = list(status.conditions);
  if (conditions.length > 0) {
    w.write(0, 'Conditions:\n');
    w.write(1, 'Type\tStatus\tReason\tMessage\n');
    w.write(1, '----\t------\t------\t-------\n');
    for (const c of conditions) w.write(1, `${str(c.type)}\t${str(c.status)}\t${str(c.reason)}\t${str(c.message)}\n`);
  }
  describeEvents(w, events, now);
  return w.text();
}

function describeStorageClass(sc: KubeObject, events: Json[], now: Date): string {
  const w = new DescribeWriter();
  const o: Json = sc;
  const annotations = sc.metadata.annotations ?? {};
  const isDefault =
    annotations['storageclass.kubernetes.io/is-default-class'] === 'true' ||
    annotations['storageclass.beta.kubernetes.io/is-default-class'] === 'true';
  w.write(0, `Name:\t${sc.metadata.name}\n`);
  w.write(0, `IsDefaultClass:\t${isDefault ? 'Yes' : 'No'}\n`);
  w.write(0, `Annotations:\t${formatMap(annotations)}\n`);
  w.write(0, `Provisioner:\t${str(o.provisioner)}\n`);
  w.write(0, `Parameters:\t${formatMap(o.parameters)}\n`);
  w.write(
    0,
    `AllowVolumeExpansion:\t${typeof o.allowVolumeExpansion === 'boolean' ? (o.allowVolumeExpansion ? 'True' : 'False') : '<unset>'}\n`,
  );
  const mountOptions = list(o.mountOptions);
  if (mountOptions.length === 0) w.write(0, 'MountOptions:\t<none>\n');
  else {
    w.write(0, 'MountOptions:\n');
    for (const option of mountOptions) w.write(1, `${str(option)}\n`);
  }
  w.write(0, `ReclaimPolicy:\t${str(o.reclaimPolicy)}\n`);
  w.write(0, `VolumeBindingMode:\t${str(o.volumeBindingMode)}\n`);
  const topologies = list(o.allowedTopologies);
  if (topologies.length > 0) {
    w.write(0, 'AllowedTopologies:\t\n');
    topologies.forEach((term: Json, i: number) => {
      w.write(
        1,
        `Term ${i}:\t${list(term.matchLabelExpressions)
          .map((e: Json) => `${e.key} in [${list(e.values).join(', ')}]`)
          .join('\n')}\n`,
      );
    });
  }
  describeEvents(w, events, now);
  return w.text();
}

// The generic describer (kubectl's for any kind without its own, routes among them)

function smartLabel(field: string): string {
  if (/[^A-Za-z-]/.test(field)) return field;
  const parts = field.match(/[A-Z]+(?![a-z])|[A-Z]?[a-z]+|-/g) ?? [field];
  return parts
    .map((part) =>
      ['API', 'URL', 'UID', 'GUID'].includes(part.toUpperCase())
        ? part.toUpperCase()
        : part === part.toLowerCase()
          ? part[0]?.toUpperCase() + part.slice(1)
          : part,
    )
    .join(' ');
}

function printUnstructured(
  w: DescribeWriter,
  level: number,
  content: Json,
  prefix: string,
  skip: readonly string[],
): void {
  for (const field of Object.keys(content).sort()) {
    const value = content[field];
    const path = `${prefix}.${field}`;
    if (skip.includes(path)) continue;
    if (Array.isArray(value)) {
      w.write(level, `${smartLabel(field)}:\n`);
      for (const child of value) {
        if (child && typeof child === 'object' && !Array.isArray(child))
          printUnstructured(w, level + 1, child, path, skip);
        else w.write(level + 1, `${goScalar(child)}\n`);
      }
    } else if (value && typeof value === 'object') {
      w.write(level, `${smartLabel(field)}:\n`);
      printUnstructured(w, level + 1, value, path, skip);
    } else {
      w.write(level, `${smartLabel(field)}:\t${goScalar(value)}\n`);
    }
  }
}

function goScalar(value: Json): string {
  if (value === null || value === undefined) return '<nil>';
  return String(value);
}

function describeGeneric(object: KubeObject, events: Json[], now: Date): string {
  const w = new DescribeWriter();
  w.write(0, `Name:\t${object.metadata.name}\n`);
  w.write(0, `Namespace:\t${str(object.metadata.namespace)}\n`);
  printLabels(w, 'Labels', object.metadata.labels);
  printAnnotations(w, 'Annotations', object.metadata.annotations);
  printUnstructured(w, 0, object, '', [
    '.metadata.managedFields',
    '.metadata.name',
    '.metadata.namespace',
    '.metadata.labels',
    '.metadata.annotations',
  ]);
  describeEvents(w, events, now);
  return w.text();
}

/** Describes one object as kubectl does. */
export async function describeObject(ctx: DescribeContext, kind: ResourceKind, object: KubeObject): Promise<string> {
  switch (kind) {
    case 'pods':
      return (() => {
        const w = new DescribeWriter();
        return eventsFor(ctx, object, { kind: false }).then((events) => {
          printPod(w, object, events, ctx.now);
          return w.text();
        });
      })();
    case 'nodes':
      return describeNode(ctx, object);
    case 'deployments':
      return describeDeployment(ctx, object, await eventsFor(ctx, object));
    case 'replicasets':
      return describeReplicaSet(ctx, object, await eventsFor(ctx, object));
    case 'statefulsets':
      return describeStatefulSet(ctx, object, await eventsFor(ctx, object));
    case 'services':
      return describeService(ctx, object, await eventsFor(ctx, object));
    case 'endpoints':
      return describeEndpoints(object, await eventsFor(ctx, object), ctx.now);
    case 'persistentvolumeclaims':
      return describePvc(ctx, object, await eventsFor(ctx, object));
    case 'persistentvolumes':
      return describePv(object, await eventsFor(ctx, object), ctx.now);
    case 'ingresses':
      return describeIngress(ctx, object, await eventsFor(ctx, object));
    case 'jobs':
      return describeJob(ctx, object, await eventsFor(ctx, object));
    case 'horizontalpodautoscalers':
      return describeHpa(object, await eventsFor(ctx, object), ctx.now);
    case 'storageclasses':
      return describeStorageClass(object, await eventsFor(ctx, object), ctx.now);
    default:
      return describeGeneric(object, await eventsFor(ctx, object), ctx.now);
  }
}
