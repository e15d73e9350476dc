import { isConditionTrue } from '../../cluster/conditions.js';
import type { KubeObject } from '../../cluster/types.js';
import type { FindingInput, ResourceRef } from '../envelope/findings.js';
import { containerGroups, worstFirst } from '../kube/container-groups.js';
import { describeEvent, type EventSummary, findEvents, formatAge, HOUR } from '../kube/events.js';
import { EvidenceList, nameList } from '../kube/evidence-list.js';
import { crashLog } from '../kube/log-verdicts.js';
import { ownerOf } from '../kube/pod-owners.js';
import { type ContainerView, containers, isoAge, isTerminating, podRef, podWhere, ref } from '../kube/pods.js';
import { formatBytes, parseJvmSize, parseQuantity } from '../kube/quantity.js';
import { revisionChanges } from '../kube/revisions.js';
import { containerUsage, shareOf } from '../kube/usage.js';
import type { Analyzer, AnalyzerContext } from './analyzer.js';

const NAME = 'oom-killed';

/** The current termination, else the last one, when it was an OOM kill. Asked of every container of the namespace. */
function oomTermination(c: ContainerView) {
  if (c.terminated?.reason === 'OOMKilled') return c.terminated;
  if (c.lastTerminated?.reason === 'OOMKilled') return c.lastTerminated;
  return undefined;
}

interface HeapFlag {
  where: string;
  flag: string;
  bytes: number | undefined;
  /** The heap is sized as a share of the container limit (-XX:MaxRAMPercentage), so it cannot outgrow it alone. */
  relative?: boolean;
}

/** A JVM/Node heap flag that alone exceeds the container limit explains an OOM kill better than any metric. */
function heapFlag(
  spec: { env?: { name?: string; value?: string }[]; args?: string[]; command?: string[] },
  limit: number | undefined,
): HeapFlag | undefined {
  const texts = [
    ...(spec.env ?? []).map((e) => ({ where: `env ${e.name}`, text: e.value ?? '' })),
    { where: 'args', text: [...(spec.command ?? []), ...(spec.args ?? [])].join(' ') },
  ];
  for (const { where, text } of texts) {
    const xmx = /-Xmx(\d+[kKmMgGtT]?)/.exec(text);
    if (xmx) return { where, flag: `-Xmx${xmx[1]}`, bytes: parseJvmSize(xmx[1]!) };
    const node = /--max-old-space-size=(\d+)/.exec(text);
    if (node) return { where, flag: `--max-old-space-size=${node[1]}`, bytes: Number(node[1]) * 2 ** 20 };
  }
  for (const { where, text } of texts) {
    const share = /-XX:MaxRAMPercentage=(\d+(?:\.\d+)?)/.exec(text);
    if (share) {
      const bytes = limit === undefined ? undefined : (limit * Number(share[1])) / 100;
      return { where, flag: `-XX:MaxRAMPercentage=${share[1]}`, bytes, relative: true };
    }
  }
  return undefined;
}

/**
 * How long before a container's exit a node-level OOM kill can be the kill that ended it (the kill comes first; a
 * few seconds after allows for clocks of the kubelet and the runtime).
 */
const BEFORE_EXIT_MS = 2 * 60_000;
const CLOCK_SKEW_MS = 5_000;

/**
 * Kernel OOM kills the node reported for the whole machine: the kubelet's SystemOOM ("System OOM encountered,
 * victim process: …", recorded only when the kill happened at the root cgroup, not in a container's own limit) and
 * node-problem-detector's OOMKilling when it quotes a global "Out of memory" rather than a "Memory cgroup" kill.
 */
function systemOoms(ctx: AnalyzerContext, node: string): EventSummary[] {
  return findEvents(ctx, { kind: 'Node', name: node, reasons: ['SystemOOM', 'OOMKilling'] }).filter(
    (e) => e.reason === 'SystemOOM' || !/memory cgroup/i.test(e.message),
  );
}

/** The system OOM event that coincides with the container's exit, if any: the latest one not after it. */
function coinciding(events: readonly EventSummary[], finishedAt: unknown): EventSummary | undefined {
  const exit = typeof finishedAt === 'string' ? Date.parse(finishedAt) : Number.NaN;
  if (Number.isNaN(exit)) return undefined;
  const at = (e: EventSummary) =>
    [e.last, e.first]
      .map((t) => t?.getTime())
      .find((t): t is number => t !== undefined && t >= exit - BEFORE_EXIT_MS && t <= exit + CLOCK_SKEW_MS);
  const after = (e: EventSummary) => Number((at(e) as number) > exit);
  const distance = (e: EventSummary) => Math.abs(exit - (at(e) as number));
  return events.filter((e) => at(e) !== undefined).sort((a, b) => after(a) - after(b) || distance(a) - distance(b))[0];
}

/** CronJob Jobs are named `<cronjob>-<minutes since the epoch>`: the CronJob when the Job itself was not read. */
function workloadOf(ctx: AnalyzerContext, pod: KubeObject): ResourceRef | undefined {
  const owner = ownerOf(ctx, pod);
  if (owner?.kind !== 'Job') return owner;
  const read = ctx
    .objects('jobs')
    .some((j) => j.metadata.name === owner.name && j.metadata.namespace === owner.namespace);
  const cron = /^(.+)-\d{8,}$/.exec(owner.name);
  return !read && cron ? ref('CronJob', cron[1]!, owner.namespace) : owner;
}

function memoryOf(pod: KubeObject, field: 'limits' | 'requests'): { total: number; unbounded: boolean } {
  let total = 0;
  let unbounded = false;
  for (const c of containers(pod).filter((x) => !x.init)) {
    const value = parseQuantity(c.spec?.resources?.[field]?.memory);
    if (value === undefined) unbounded = true;
    else total += value;
  }
  return { total, unbounded };
}

interface NodeMemory {
  evidence: string[];
  /** Workloads on the node with no memory limit: what can take the node's memory without being stopped. */
  suspects: ResourceRef[];
}

/** The node's memory as the scheduler sees it: allocatable, what its pods (those read) request and may use. */
function nodeMemory(ctx: AnalyzerContext, nodeName: string, victim: KubeObject): NodeMemory {
  const node = ctx.objects('nodes').find((n) => n.metadata.name === nodeName);
  const pods = ctx
    .objects('pods')
    .filter((p) => p.spec?.nodeName === nodeName && !isTerminating(p))
    .filter((p) => p.status?.phase === 'Running' || p.status?.phase === 'Pending');
  const evidence: string[] = [];
  const allocatable = parseQuantity(node?.status?.allocatable?.memory);
  if (allocatable !== undefined && pods.length > 0) {
    const requests = pods.reduce((n, p) => n + memoryOf(p, 'requests').total, 0);
    const limits = pods.reduce((n, p) => n + memoryOf(p, 'limits').total, 0);
    const pressure = isConditionTrue(node, 'MemoryPressure');
    const namespaces = [...new Set(pods.map((p) => p.metadata.namespace ?? ctx.namespace))].sort();
    const partial = namespaces.length === 1 ? ` (only namespace ${namespaces[0]} was read there)` : '';
    evidence.push(
      `node ${nodeName}: allocatable memory ${formatBytes(allocatable)}; ${pods.length} pod(s) on it request ${formatBytes(requests)} and are limited to ${formatBytes(limits)} (${Math.round((limits / allocatable) * 100)}% of allocatable)${partial}${pressure ? '; MemoryPressure=True' : ''}`,
    );
  }
  const unlimited = pods.filter((p) => p !== victim && memoryOf(p, 'limits').unbounded);
  const suspects: ResourceRef[] = [];
  for (const p of unlimited) {
    const w = workloadOf(ctx, p) ?? podRef(p);
    if (!suspects.some((s) => s.kind === w.kind && s.name === w.name && s.namespace === w.namespace)) suspects.push(w);
  }
  if (unlimited.length > 0) {
    evidence.push(
      `pods on ${nodeName} without a memory limit: ${nameList(
        unlimited.map((p) => {
          const w = workloadOf(ctx, p);
          return `${podWhere(ctx, p).replace(/ \(node [^)]*\)$/, '')}${w ? ` (${w.kind} ${w.name})` : ''}`;
        }),
        4,
      )}`,
    );
  }
  return { evidence, suspects };
}

/** Why the container was killed, what to change and how sure: each step may revise it. */
interface OomVerdict {
  cause: string;
  confidence: number;
  owner?: ResourceRef;
  change?: string;
  alternatives?: Array<{ resource: ResourceRef; change: string }>;
  related: ResourceRef[];
}

/** A system OOM on the node at the time of the kill: its memory, or an unbounded neighbour, is the cause. */
function blameNode(
  ctx: AnalyzerContext,
  pod: KubeObject,
  finishedAt: unknown,
  nodeName: string | undefined,
  limit: number | undefined,
  limitText: unknown,
  evidence: EvidenceList,
  v: OomVerdict,
): void {
  const nodeEvents = nodeName ? systemOoms(ctx, nodeName) : [];
  const killer = coinciding(nodeEvents, finishedAt);
  if (nodeName && (killer || (limit === undefined && nodeEvents.length > 0))) {
    // The kernel chose a victim for the whole machine: the container's own limit was never reached, so raising
    // it changes nothing; the node's memory is what ran out.
    const at = killer?.last ?? nodeEvents[0]?.last;
    const exit = Date.parse(String(finishedAt));
    evidence.add(
      1,
      `${describeEvent(killer ?? nodeEvents[0]!, ctx.now)} on node ${nodeName}${at && !Number.isNaN(exit) ? `, ${Math.round(Math.abs(exit - at.getTime()) / 1000)}s ${exit >= at.getTime() ? 'before' : 'after'} the container exited` : ''}`,
    );
    if (nodeEvents.length > 1) evidence.add(6, `${nodeEvents.length} system OOM kills on node ${nodeName} recently`);
    v.cause =
      limit === undefined
        ? `node ${nodeName} ran out of memory (system OOM) and the kernel chose it`
        : `node ${nodeName} ran out of memory (system OOM), not its own ${limitText} limit`;
    v.confidence = killer ? 0.92 : 0.8;
    const nodeRef = ref('Node', nodeName);
    v.owner = nodeRef;
    const memory = nodeMemory(ctx, nodeName, pod);
    for (const line of memory.evidence) evidence.add(2, line);
    v.related.push(nodeRef, ...memory.suspects);
    // One neighbour with no memory limit on a node that ran out: bounding it is the change; the node is the
    // alternative (more memory, fewer pods).
    const [hog, ...others] = memory.suspects;
    if (hog && others.length === 0) {
      v.owner = hog;
      v.change = `set a memory limit (and a request that reserves it) on ${hog.kind} ${hog.name}, whose pods run unbounded on node ${nodeName}`;
      v.alternatives = [
        { resource: nodeRef, change: `give node ${nodeName} more memory, or keep ${hog.kind} ${hog.name} off it` },
      ];
    }
  } else if (nodeEvents[0]) {
    evidence.add(3, `${describeEvent(nodeEvents[0], ctx.now)} on node ${nodeName} (not at the time of this kill)`);
  }
}

/** A heap flag that does not fit the limit, and memory in use since the restart heading back to it. */
function weighHeapAndUsage(
  ctx: AnalyzerContext,
  pod: KubeObject,
  container: string,
  heap: HeapFlag | undefined,
  limit: number | undefined,
  limitText: unknown,
  evidence: EvidenceList,
  v: OomVerdict,
): void {
  if (heap?.bytes !== undefined && limit !== undefined && !heap.relative && heap.bytes >= limit * 0.9) {
    evidence.add(
      v.owner ? 3 : 2,
      `${heap.where} sets ${heap.flag} (${formatBytes(heap.bytes)}) ≥ 90% of the ${limitText} limit: heap alone outgrows the container`,
    );
    if (!v.owner) {
      v.cause = `its heap setting ${heap.flag} does not fit in the ${limitText} limit`;
      v.confidence = 0.95;
    }
  } else if (heap?.bytes !== undefined && limit !== undefined) {
    evidence.add(
      3,
      `${heap.where} sets ${heap.flag}: heap capped at ${formatBytes(heap.bytes)}, ${Math.round((heap.bytes / limit) * 100)}% of the ${limitText} limit`,
    );
  }
  // The container restarted after the kill; what it uses now says whether it is heading for the limit again.
  const used = containerUsage(ctx, pod, container);
  if (used !== undefined && limit !== undefined) {
    evidence.add(2, `memory in use now (metrics.k8s.io): ${shareOf(used.memory, limit, 'memory', 'its limit')}`);
    if (used.memory >= limit * 0.9 && !v.owner) {
      v.cause = `${v.cause}; it is back at ${Math.round((used.memory / limit) * 100)}% of the limit since it restarted`;
      v.confidence = Math.max(v.confidence, 0.95);
    }
  } else if (used !== undefined) {
    evidence.add(2, `memory in use now (metrics.k8s.io): ${formatBytes(used.memory)}, with no limit`);
  }
}

export const oomKilledAnalyzer: Analyzer = {
  name: NAME,
  domain: 'compute',
  description: 'Containers killed for exceeding memory (OOMKilled, exit 137) with limits, requests and heap flags.',
  needs: ['pods', 'events'],
  analyze(ctx: AnalyzerContext): FindingInput[] {
    const findings: FindingInput[] = [];
    for (const unordered of containerGroups(ctx, (c) => oomTermination(c) !== undefined)) {
      // The replica killed most recently leads: it is the one whose evidence (node events, logs) is still fresh.
      const group = worstFirst(unordered);
      const { pod, c } = group[0]!;
      const t = oomTermination(c);
      if (t === undefined) continue;
      const age = isoAge(ctx.now, t.finishedAt);
      const looping = c.waitingReason === 'CrashLoopBackOff';
      // One OOM kill yesterday on a container that has run fine since is history, not the incident.
      const current = looping || age <= 6 * HOUR;
      const limits = c.spec?.resources?.limits ?? {};
      const req = c.spec?.resources?.requests ?? {};
      const limit = parseQuantity(limits.memory);
      const request = parseQuantity(req.memory);
      const nodeName: string | undefined = pod.spec?.nodeName;
      // Ranks: the kill, then what killed it (its limit, its heap, or the node), then the replicas and history.
      const evidence = new EvidenceList()
        .add(
          0,
          `container ${c.name}: ${looping ? 'CrashLoopBackOff, ' : ''}${c.restartCount} restarts, last terminated reason=OOMKilled exitCode=${t.exitCode ?? 137} ${formatAge(age)} ago${nodeName ? ` on node ${nodeName}` : ''}`,
        )
        .add(
          1,
          limit === undefined
            ? `no memory limit (request ${req.memory ?? 'none'}): killed by node memory pressure`
            : `memory limit ${limits.memory}, request ${req.memory ?? 'none'}${request !== undefined && limit > 0 ? ` (request/limit ${Math.round((request / limit) * 100)}%)` : ''}`,
        );
      const heap = heapFlag(c.spec ?? {}, limit);
      const v: OomVerdict = {
        cause: limit === undefined ? 'the node ran out of memory' : `it exceeds its ${limits.memory} memory limit`,
        confidence: 0.9,
        related: [],
      };
      blameNode(ctx, pod, t.finishedAt, nodeName, limit, limits.memory, evidence, v);
      weighHeapAndUsage(ctx, pod, c.name, heap, limit, limits.memory, evidence, v);
      const { cause, confidence, owner, change, alternatives, related } = v;
      const logLine = crashLog(ctx, pod, c.name)
        ?.split(/\r?\n/)
        .reverse()
        .find((l) => /OutOfMemoryError|heap out of memory|Killed|out of memory/i.test(l));
      if (logLine) evidence.add(3, `log: ${logLine.trim()}`);

      if (group.length > 1) {
        evidence.add(
          4,
          `${group.length} pods of the workload were OOM-killed: ${nameList(group.map((g) => podWhere(ctx, g.pod)))}`,
        );
      }
      evidence.add(5, revisionChanges(ctx, pod));
      const workload = ownerOf(ctx, pod);
      findings.push({
        code: 'CONTAINER_OOMKILLED',
        analyzer: NAME,
        domain: 'compute',
        severity: current ? 'high' : 'low',
        resource: podRef(pod),
        message: `Container ${c.name} of pod ${pod.metadata.name} is OOM-killed (exit 137): ${cause}.`,
        evidence: evidence.lines(),
        confidence: current ? confidence : 0.4,
        related: [...(workload ? [workload] : []), ...related],
        remediation: owner
          ? ['relieve-node-memory', 'set-memory-limits']
          : heap && !heap.relative
            ? ['align-heap-with-limit', 'raise-memory-limit']
            : ['raise-memory-limit', 'profile-memory'],
        ...(owner ? { owner } : {}),
        ...(change ? { change } : {}),
        ...(alternatives ? { alternatives } : {}),
      });
    }
    return findings;
  },
};
