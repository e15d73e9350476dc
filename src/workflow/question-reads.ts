import { conditionOf, isConditionTrue } from '../cluster/conditions.js';
import { eventTime } from '../cluster/event-time.js';
import { ClusterReadError, type ClusterReader, type KubeObject } from '../cluster/types.js';
import type { BoundQuestion, QuestionId } from '../diagnosis/question-bindings.js';
import { parseQuantityExact } from '../kubectl/quantity.js';

/**
 * The answers to the questions calmops offers, computed from reads: each question's reads and the arithmetic that
 * answers it (free capacity is allocatable minus requests, node by node; a crash loop is dated against the newest
 * ReplicaSet; and so on). Lines of plain text, the fact asked for first.
 */

// biome-ignore lint/suspicious/noExplicitAny: raw API JSON read defensively
type Json = any;

export interface QuestionContext {
  reader: ClusterReader;
  namespace: string;
  /** The instant "the last hour" is counted back from. */
  now: Date;
  signal?: AbortSignal;
}

const list = (value: Json): Json[] => (Array.isArray(value) ? value : []);
const num = (text: Json): number => parseQuantityExact(String(text ?? '0'))?.value ?? 0;
/** CPU as Kubernetes writes it: whole cores plain, anything else in millicores. */
const cores = (n: number) => (Number.isInteger(n) ? `${n}` : `${Math.round(n * 1000)}m`);
const mib = (n: number) => (n >= 1024 ** 3 ? `${(n / 1024 ** 3).toFixed(1)}Gi` : `${Math.round(n / 1024 ** 2)}Mi`);
const time = (t: Json) => (typeof t === 'string' && t !== '' ? t.replace('.000Z', 'Z') : '?');
const ago = (now: Date, t: Json) => {
  const ms = now.getTime() - Date.parse(String(t));
  if (Number.isNaN(ms)) return '?';
  const m = Math.round(ms / 60_000);
  return m < 120 ? `${m}m ago` : m < 2880 ? `${Math.round(m / 60)}h ago` : `${Math.round(m / 1440)}d ago`;
};

function podRequests(pod: Json, resource: 'cpu' | 'memory'): number {
  const containers = list(pod.spec?.containers).reduce(
    (n: number, c: Json) => n + num(c.resources?.requests?.[resource]),
    0,
  );
  const init = Math.max(0, ...list(pod.spec?.initContainers).map((c: Json) => num(c.resources?.requests?.[resource])));
  return Math.max(containers, init);
}

function lastTime(e: Json): string {
  const at = eventTime(e);
  return at === undefined ? '' : new Date(at).toISOString();
}

async function freeCapacity(ctx: QuestionContext): Promise<string[]> {
  const [nodes, pods, pending] = await Promise.all([
    ctx.reader.list({ kind: 'nodes' }, ctx.signal),
    ctx.reader.list({ kind: 'pods', fieldSelector: 'status.phase!=Succeeded,status.phase!=Failed' }, ctx.signal),
    ctx.reader.list({ kind: 'pods', namespace: ctx.namespace, fieldSelector: 'status.phase=Pending' }, ctx.signal),
  ]);
  const usage = ctx.reader.metrics
    ? await ctx.reader.metrics({ kind: 'nodes' }, ctx.signal).catch(() => [] as KubeObject[])
    : [];
  const want = pending.find((p) => !(p as Json).spec?.nodeName);
  const wantCpu = want ? podRequests(want, 'cpu') : 0;
  const wantMem = want ? podRequests(want, 'memory') : 0;
  const rows = nodes.map((node: Json) => {
    const here = pods.filter((p: Json) => p.spec?.nodeName === node.metadata.name);
    const cpu = num(node.status?.allocatable?.cpu) - here.reduce((n, p) => n + podRequests(p, 'cpu'), 0);
    const memory = num(node.status?.allocatable?.memory) - here.reduce((n, p) => n + podRequests(p, 'memory'), 0);
    const ready = isConditionTrue(node, 'Ready');
    const schedulable = ready && node.spec?.unschedulable !== true;
    const used = usage.find((u) => u.metadata.name === node.metadata.name) as Json;
    return {
      name: node.metadata.name as string,
      cpu,
      memory,
      schedulable,
      used,
      allocCpu: num(node.status?.allocatable?.cpu),
    };
  });
  rows.sort((a, b) => b.cpu - a.cpu);
  const fits = rows.filter((r) => r.schedulable && r.cpu >= wantCpu && r.memory >= wantMem);
  const head = want
    ? fits.length === 0
      ? `No node has room for pod ${want.metadata.name} (requests cpu ${cores(wantCpu)}, memory ${mib(wantMem)}): free capacity is allocatable minus the requests of the pods on each node.`
      : `${fits.length} node(s) have room for pod ${want.metadata.name} (requests cpu ${cores(wantCpu)}, memory ${mib(wantMem)}): ${fits.map((f) => f.name).join(', ')}.`
    : 'Free capacity per node (allocatable minus the requests of the pods on it):';
  return [
    head,
    ...rows.map(
      (r) =>
        `${r.name}: cpu ${cores(Math.max(0, r.cpu))} free, memory ${mib(Math.max(0, r.memory))} free${r.schedulable ? '' : ' (not schedulable)'}${r.used ? `; in use now cpu ${cores(num(r.used.usage?.cpu))} of ${cores(r.allocCpu)}` : ''}`,
    ),
  ];
}

async function crashVsRollout(ctx: QuestionContext): Promise<string[]> {
  const [pods, replicaSets, events] = await Promise.all([
    ctx.reader.list({ kind: 'pods', namespace: ctx.namespace }, ctx.signal),
    ctx.reader.list({ kind: 'replicasets', namespace: ctx.namespace }, ctx.signal),
    ctx.reader.list({ kind: 'events', namespace: ctx.namespace, fieldSelector: 'reason=BackOff' }, ctx.signal),
  ]);
  const crashing = pods.filter((p: Json) =>
    list(p.status?.containerStatuses).some(
      (c: Json) => (c.restartCount ?? 0) > 0 || c.state?.waiting?.reason === 'CrashLoopBackOff',
    ),
  );
  if (crashing.length === 0) return [`No pod in ${ctx.namespace} is crashing or has restarted.`];
  const lines: string[] = [];
  const byOwner = new Map<string, Json[]>();
  for (const p of crashing) {
    const rs = list(p.metadata.ownerReferences).find((r: Json) => r.kind === 'ReplicaSet')?.name ?? '';
    byOwner.set(rs, [...(byOwner.get(rs) ?? []), p]);
  }
  for (const [rsName, group] of byOwner) {
    const rs: Json = replicaSets.find((r) => r.metadata.name === rsName);
    const deployment = list(rs?.metadata?.ownerReferences).find((r: Json) => r.kind === 'Deployment')?.name;
    const siblings = replicaSets
      .filter((r: Json) =>
        list(r.metadata.ownerReferences).some((o: Json) => o.kind === 'Deployment' && o.name === deployment),
      )
      .sort(
        (a, b) => Date.parse(String(b.metadata.creationTimestamp)) - Date.parse(String(a.metadata.creationTimestamp)),
      );
    const newest: Json = siblings[0] ?? rs;
    const names = new Set(group.map((p) => p.metadata.name));
    const firstBackOff = events
      .filter((e: Json) => names.has(e.involvedObject?.name))
      .map((e: Json) => String(e.firstTimestamp ?? e.eventTime ?? ''))
      .filter(Boolean)
      .sort()[0];
    const firstTermination = group
      .flatMap((p: Json) => list(p.status?.containerStatuses).map((c: Json) => c.lastState?.terminated?.startedAt))
      .filter(Boolean)
      .sort()[0];
    const firstCrash = [firstBackOff, firstTermination].filter(Boolean).sort()[0];
    const created = newest?.metadata?.creationTimestamp;
    const revision = newest?.metadata?.annotations?.['deployment.kubernetes.io/revision'];
    if (!firstCrash || !created) {
      lines.push(`Pods ${[...names].join(', ')} crash; when the crashes or the rollout began is not recorded.`);
      continue;
    }
    const gap = Math.round((Date.parse(firstCrash) - Date.parse(created)) / 60_000);
    const verdict =
      gap >= 0
        ? `Yes: the first crash (${time(firstCrash)}) came ${gap} min after ReplicaSet ${newest.metadata.name}${revision ? ` (revision ${revision})` : ''} of Deployment ${deployment ?? '?'} was created (${time(created)}).`
        : `No: the crashes began at ${time(firstCrash)}, ${-gap} min before the newest ReplicaSet ${newest.metadata.name}${revision ? ` (revision ${revision})` : ''} was created (${time(created)}).`;
    lines.push(verdict);
    if (siblings.length > 1) {
      const previous: Json = siblings[1];
      lines.push(
        `The ReplicaSet before it: ${previous.metadata.name}${previous.metadata.annotations?.['deployment.kubernetes.io/revision'] ? ` (revision ${previous.metadata.annotations['deployment.kubernetes.io/revision']})` : ''}, created ${time(previous.metadata.creationTimestamp)}, ${previous.status?.readyReplicas ?? 0} ready.`,
      );
    }
  }
  return lines;
}

async function livenessKills(ctx: QuestionContext): Promise<string[]> {
  const [pods, events] = await Promise.all([
    ctx.reader.list({ kind: 'pods', namespace: ctx.namespace }, ctx.signal),
    ctx.reader.list({ kind: 'events', namespace: ctx.namespace }, ctx.signal),
  ]);
  const lines: string[] = [];
  for (const pod of pods as Json[]) {
    for (const c of list(pod.spec?.containers)) {
      if (!c.livenessProbe) continue;
      const status = list(pod.status?.containerStatuses).find((s: Json) => s.name === c.name) ?? {};
      const about = (e: Json) => e.involvedObject?.name === pod.metadata.name;
      const failed = events.filter(
        (e: Json) => about(e) && e.reason === 'Unhealthy' && /Liveness probe failed/i.test(e.message ?? ''),
      );
      const killed = events.filter(
        (e: Json) => about(e) && e.reason === 'Killing' && /liveness probe/i.test(e.message ?? ''),
      );
      const count = (es: Json[]) => es.reduce((n, e) => n + (e.series?.count ?? e.count ?? 1), 0);
      const p = c.livenessProbe;
      const how = p.httpGet
        ? `http-get ${p.httpGet.path ?? '/'} on port ${p.httpGet.port}`
        : p.tcpSocket
          ? `tcp-socket port ${p.tcpSocket.port}`
          : p.exec
            ? `exec ${list(p.exec.command).join(' ')}`
            : 'probe';
      const exit = status.lastState?.terminated;
      const ports = list(c.ports).map((x: Json) => `${x.containerPort}${x.name ? ` (${x.name})` : ''}`);
      const portMismatch =
        (p.httpGet || p.tcpSocket) &&
        ports.length > 0 &&
        !list(c.ports).some(
          (x: Json) =>
            x.containerPort === (p.httpGet ?? p.tcpSocket).port || x.name === (p.httpGet ?? p.tcpSocket).port,
        );
      const verdict =
        killed.length > 0 || (failed.length > 0 && (exit?.exitCode === 137 || exit?.exitCode === 143))
          ? 'Yes: the liveness probe fails and the kubelet kills the container for it'
          : failed.length > 0
            ? 'The liveness probe fails, but no kill for it is recorded'
            : 'No: no failed liveness probe is recorded';
      lines.push(
        `${verdict} (pod ${pod.metadata.name}, container ${c.name}): probe ${how}, initialDelay ${p.initialDelaySeconds ?? 0}s, period ${p.periodSeconds ?? 10}s, timeout ${p.timeoutSeconds ?? 1}s, failureThreshold ${p.failureThreshold ?? 3}; ${count(failed)} liveness failure(s), ${count(killed)} kill(s) for it; ${status.restartCount ?? 0} restarts${exit ? `, last exit code ${exit.exitCode}${exit.reason ? ` (${exit.reason})` : ''}` : ''}${portMismatch ? `; the probe's port is not one the container declares (${ports.join(', ')})` : ''}.`,
      );
    }
  }
  return lines.length > 0
    ? lines.slice(0, 12)
    : [`No container in ${ctx.namespace} has a liveness probe, so no probe kills it.`];
}

async function containerPorts(ctx: QuestionContext): Promise<string[]> {
  const [services, pods] = await Promise.all([
    ctx.reader.list({ kind: 'services', namespace: ctx.namespace }, ctx.signal),
    ctx.reader.list({ kind: 'pods', namespace: ctx.namespace }, ctx.signal),
  ]);
  const lines: string[] = [];
  for (const svc of services as Json[]) {
    const selector = svc.spec?.selector ?? {};
    const keys = Object.keys(selector);
    if (keys.length === 0) continue;
    const selected = pods.filter((p: Json) => keys.every((k) => p.metadata.labels?.[k] === selector[k]));
    const declared = new Map<string, string>();
    for (const p of selected as Json[]) {
      for (const c of list(p.spec?.containers)) {
        for (const port of list(c.ports)) {
          declared.set(
            String(port.containerPort),
            `${c.name} ${port.containerPort}/${port.protocol ?? 'TCP'}${port.name ? ` (${port.name})` : ''}`,
          );
          if (port.name)
            declared.set(port.name, `${c.name} ${port.containerPort}/${port.protocol ?? 'TCP'} (${port.name})`);
        }
      }
    }
    for (const sp of list(svc.spec?.ports)) {
      const target = String(sp.targetPort ?? sp.port);
      const match = declared.get(target);
      const listens = [...new Set([...declared.values()])].join(', ') || 'no declared port';
      lines.push(
        match
          ? `Service ${svc.metadata.name} port ${sp.port} → targetPort ${target}: matches container ${match}.`
          : `Service ${svc.metadata.name} port ${sp.port} → targetPort ${target}: no selected container listens there; the containers declare ${listens}${selected.length === 0 ? ' (the selector matches no pod)' : ''}.`,
      );
    }
  }
  return lines.length > 0 ? lines : [`No Service in ${ctx.namespace} selects pods.`];
}

function podReason(pod: Json | undefined): string {
  if (!pod) return 'no pod found for it';
  const waiting = list(pod.status?.containerStatuses).find((c: Json) => c.state?.waiting)?.state?.waiting?.reason;
  const ready = conditionOf(pod, 'Ready');
  const notReady = list(pod.status?.containerStatuses)
    .filter((c: Json) => !c.ready)
    .map((c: Json) => c.name);
  return [
    `phase ${pod.status?.phase ?? '?'}`,
    waiting ? `waiting: ${waiting}` : undefined,
    ready ? `Ready=${ready.status}${ready.reason ? ` (${ready.reason})` : ''}` : undefined,
    notReady.length > 0 ? `containers not ready: ${notReady.join(', ')}` : undefined,
  ]
    .filter(Boolean)
    .join(', ');
}

async function endpointReadiness(ctx: QuestionContext): Promise<string[]> {
  const [endpoints, pods, services] = await Promise.all([
    ctx.reader.list({ kind: 'endpoints', namespace: ctx.namespace }, ctx.signal),
    ctx.reader.list({ kind: 'pods', namespace: ctx.namespace }, ctx.signal),
    ctx.reader.list({ kind: 'services', namespace: ctx.namespace }, ctx.signal),
  ]);
  const lines: string[] = [];
  for (const svc of services as Json[]) {
    const ep: Json = endpoints.find((e) => e.metadata.name === svc.metadata.name);
    const ready = list(ep?.subsets).flatMap((s: Json) => list(s.addresses));
    const notReady = list(ep?.subsets).flatMap((s: Json) => list(s.notReadyAddresses));
    lines.push(
      `Service ${svc.metadata.name}: ${ready.length} ready endpoint(s), ${notReady.length} not ready${ready.length === 0 ? ' — it has no endpoint to send traffic to' : ''}.`,
    );
    for (const a of notReady.slice(0, 6)) {
      const pod = pods.find((p) => p.metadata.name === a.targetRef?.name);
      lines.push(`  ${a.ip} (${a.targetRef?.name ?? 'no pod'}): not ready — ${podReason(pod)}`);
    }
    for (const a of ready.slice(0, 6)) lines.push(`  ${a.ip} (${a.targetRef?.name ?? '?'}): ready`);
  }
  return lines.length > 0 ? lines : [`No Service in ${ctx.namespace}.`];
}

async function recentChanges(ctx: QuestionContext, windowMinutes: number): Promise<string[]> {
  const [events, replicaSets, pods] = await Promise.all([
    ctx.reader.list({ kind: 'events', namespace: ctx.namespace }, ctx.signal),
    ctx.reader.list({ kind: 'replicasets', namespace: ctx.namespace }, ctx.signal),
    ctx.reader.list({ kind: 'pods', namespace: ctx.namespace }, ctx.signal),
  ]);
  // "The last hour" ends at the newest thing the cluster recorded: now on a live cluster, the capture on a snapshot.
  const newest = Math.max(...(events as Json[]).map((e) => Date.parse(lastTime(e))).filter((t) => !Number.isNaN(t)));
  const end = Number.isFinite(newest) ? Math.min(ctx.now.getTime(), newest) : ctx.now.getTime();
  const since = end - windowMinutes * 60_000;
  const inWindow = (t: Json) => {
    const at = Date.parse(String(t));
    return !Number.isNaN(at) && at >= since && at <= end + 60_000;
  };
  const span = windowMinutes % 60 === 0 ? `${windowMinutes / 60} hour(s)` : `${windowMinutes} minutes`;
  const lines = [
    `What changed in ${ctx.namespace} in the last ${span} (since ${new Date(since).toISOString().replace('.000Z', 'Z')}):`,
  ];
  const created = [...replicaSets, ...pods].filter((o) => inWindow(o.metadata.creationTimestamp));
  for (const o of created.slice(0, 8)) {
    lines.push(`  created ${o.kind} ${o.metadata.name} ${ago(new Date(end), o.metadata.creationTimestamp)}`);
  }
  const recent = (events as Json[])
    .filter((e) => inWindow(lastTime(e)))
    .sort((a, b) => Date.parse(lastTime(a)) - Date.parse(lastTime(b)));
  for (const e of recent.slice(-15)) {
    lines.push(
      `  ${ago(new Date(end), lastTime(e))}: ${e.type} ${e.reason} ${e.involvedObject?.kind}/${e.involvedObject?.name}: ${String(e.message ?? '').slice(0, 160)}`,
    );
  }
  if (created.length === 0 && recent.length === 0)
    lines.push('  nothing: no object was created and no event was recorded in that time.');
  else lines.push(`${created.length} object(s) created, ${recent.length} event(s); older events are left out.`);
  return lines;
}

async function defaultStorageClass(ctx: QuestionContext): Promise<string[]> {
  const classes = await ctx.reader.list({ kind: 'storageclasses' }, ctx.signal);
  const isDefault = (sc: Json) =>
    sc.metadata.annotations?.['storageclass.kubernetes.io/is-default-class'] === 'true' ||
    sc.metadata.annotations?.['storageclass.beta.kubernetes.io/is-default-class'] === 'true';
  const defaults = classes.filter(isDefault).map((sc) => sc.metadata.name);
  const head =
    defaults.length === 1
      ? `The default StorageClass is ${defaults[0]}.`
      : defaults.length === 0
        ? 'There is no default StorageClass: a PVC without storageClassName stays Pending until one is marked default.'
        : `${defaults.length} StorageClasses are marked default (${defaults.join(', ')}): that is itself a problem; Kubernetes uses the newest one, and a PVC may not get the class its author expects. Mark exactly one as default.`;
  return [
    head,
    ...classes.map(
      (sc: Json) =>
        `  ${sc.metadata.name}${isDefault(sc) ? ' (default)' : ''}: provisioner ${sc.provisioner ?? '?'}, binding ${sc.volumeBindingMode ?? 'Immediate'}`,
    ),
  ];
}

async function memoryLimit(ctx: QuestionContext): Promise<string[]> {
  const pods = await ctx.reader.list({ kind: 'pods', namespace: ctx.namespace }, ctx.signal);
  const usage = ctx.reader.metrics
    ? await ctx.reader.metrics({ kind: 'pods', namespace: ctx.namespace }, ctx.signal).catch(() => [] as KubeObject[])
    : [];
  const lines: string[] = [];
  for (const pod of pods as Json[]) {
    for (const c of list(pod.spec?.containers)) {
      const status = list(pod.status?.containerStatuses).find((s: Json) => s.name === c.name) ?? {};
      const killed =
        status.lastState?.terminated?.reason === 'OOMKilled' || status.state?.terminated?.reason === 'OOMKilled';
      const limit = c.resources?.limits?.memory;
      const used = list((usage.find((u) => u.metadata.name === pod.metadata.name) as Json)?.containers).find(
        (m: Json) => m.name === c.name,
      )?.usage?.memory;
      if (!killed && used === undefined) continue;
      const share = used !== undefined && limit ? ` (${Math.round((num(used) / num(limit)) * 100)}% of the limit)` : '';
      lines.push(
        `${killed ? 'OOM-killed' : 'running'}: pod ${pod.metadata.name}, container ${c.name}: limit ${limit ?? 'none'}, request ${c.resources?.requests?.memory ?? 'none'}${used !== undefined ? `, using ${mib(num(used))} now${share}` : ', usage not measured (no Metrics API)'}${killed ? `, ${status.restartCount ?? 0} restarts` : ''}.`,
      );
    }
  }
  lines.sort((a, b) => Number(b.startsWith('OOM')) - Number(a.startsWith('OOM')));
  return lines.length > 0
    ? lines.slice(0, 12)
    : [`No container in ${ctx.namespace} was OOM-killed, and no usage is measured.`];
}

const ANSWERS: Record<QuestionId, (ctx: QuestionContext, question: BoundQuestion) => Promise<string[]>> = {
  'free-capacity': freeCapacity,
  'crash-vs-rollout': crashVsRollout,
  'liveness-kills': livenessKills,
  'container-ports': containerPorts,
  'endpoint-readiness': endpointReadiness,
  'recent-changes': (ctx, q) => recentChanges(ctx, q.windowMinutes ?? 60),
  'default-storageclass': defaultStorageClass,
  'memory-limit': memoryLimit,
};

/** Answers a bound question with its reads and computation; a read that fails says what could not be read. */
export async function answerBoundQuestion(question: BoundQuestion, ctx: QuestionContext): Promise<string[]> {
  try {
    return await ANSWERS[question.id](ctx, question);
  } catch (error) {
    if (error instanceof ClusterReadError) return [`I could not read what answers this: ${error.message}`];
    throw error;
  }
}
