import type { Analyzer, AnalyzerContext } from '../analyzer.js';
import type { FindingInput } from '../findings.js';
import { describeEvent, findEvents, formatAge, HOUR } from './events.js';
import { type ContainerView, containerGroups, crashLog, isoAge, ownerOf, podRef } from './pods.js';
import { formatBytes, parseJvmSize, parseQuantity } from './quantity.js';

const NAME = 'oom-killed';

function oomTermination(c: ContainerView) {
  for (const t of [c.terminated, c.lastTerminated]) {
    if (t?.reason === 'OOMKilled') return t;
  }
  return undefined;
}

/** A JVM/Node heap flag that alone exceeds the container limit explains an OOM kill better than any metric. */
function heapFlag(spec: { env?: { name?: string; value?: string }[]; args?: string[]; command?: string[] }) {
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
  return undefined;
}

export const oomKilledAnalyzer: Analyzer = {
  name: NAME,
  domain: 'compute',
  description: 'Containers killed for exceeding memory (OOMKilled, exit 137) with limits, requests and heap flags.',
  needs: ['pods', 'events'],
  analyze(ctx: AnalyzerContext): FindingInput[] {
    const findings: FindingInput[] = [];
    for (const group of containerGroups(ctx, (c) => oomTermination(c) !== undefined)) {
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
      const evidence = [
        `container ${c.name}: ${looping ? 'CrashLoopBackOff, ' : ''}${c.restartCount} restarts, last terminated reason=OOMKilled exitCode=${t.exitCode ?? 137} ${formatAge(age)} ago`,
        limit === undefined
          ? `no memory limit (request ${req.memory ?? 'none'}): killed by node memory pressure`
          : `memory limit ${limits.memory}, request ${req.memory ?? 'none'}${request !== undefined && limit > 0 ? ` (request/limit ${Math.round((request / limit) * 100)}%)` : ''}`,
      ];
      const heap = heapFlag(c.spec ?? {});
      let cause = limit === undefined ? 'the node ran out of memory' : `it exceeds its ${limits.memory} memory limit`;
      let confidence = 0.9;
      if (heap?.bytes !== undefined && limit !== undefined && heap.bytes >= limit * 0.9) {
        evidence.push(
          `${heap.where} sets ${heap.flag} (${formatBytes(heap.bytes)}) ≥ 90% of the ${limits.memory} limit: heap alone outgrows the container`,
        );
        cause = `its heap setting ${heap.flag} does not fit in the ${limits.memory} limit`;
        confidence = 0.95;
      }
      const usage = pod.metadata.annotations?.['calmops.io/memory-usage'];
      if (usage) evidence.push(`observed memory usage ${usage}`);
      const logLine = crashLog(ctx, pod, c.name)
        ?.split(/\r?\n/)
        .reverse()
        .find((l) => /OutOfMemoryError|heap out of memory|Killed|out of memory/i.test(l));
      if (logLine) evidence.push(`log: ${logLine.trim()}`);
      const nodeOom = pod.spec?.nodeName
        ? findEvents(ctx, { kind: 'Node', name: pod.spec.nodeName, reasons: ['OOMKilling', 'SystemOOM'] })[0]
        : undefined;
      if (nodeOom) evidence.push(describeEvent(nodeOom, ctx.now));
      if (group.length > 1) evidence.push(`${group.length} pods of the workload were OOM-killed`);
      const owner = ownerOf(ctx, pod);
      findings.push({
        code: 'CONTAINER_OOMKILLED',
        analyzer: NAME,
        domain: 'compute',
        severity: current ? 'high' : 'low',
        resource: podRef(pod),
        message: `Container ${c.name} of pod ${pod.metadata.name} is OOM-killed (exit 137): ${cause}.`,
        evidence,
        confidence: current ? confidence : 0.4,
        related: owner ? [owner] : [],
        remediation: heap ? ['align-heap-with-limit', 'raise-memory-limit'] : ['raise-memory-limit', 'profile-memory'],
      });
    }
    return findings;
  },
};
