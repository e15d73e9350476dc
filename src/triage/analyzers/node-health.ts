import type { KubeObject } from '../../cluster/types.js';
import type { Analyzer, AnalyzerContext } from '../analyzer.js';
import type { FindingInput } from '../findings.js';
import { canSee, describeEvent, findEvents, formatAge, HOUR } from './events.js';
import { groupBy, isoAge, namespacePods, ownerKey, ownerOf, podCondition, podRef, ref } from './pods.js';

const NAME = 'node-health';

const PRESSURE = ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'NetworkUnavailable'] as const;

// biome-ignore lint/suspicious/noExplicitAny: raw condition JSON
function condition(node: KubeObject, type: string): any {
  return (Array.isArray(node.status?.conditions) ? node.status.conditions : []).find(
    (c: { type?: string }) => c?.type === type,
  );
}

// biome-ignore lint/suspicious/noExplicitAny: raw condition JSON
function conditionLine(ctx: AnalyzerContext, c: any): string {
  const since = c.lastTransitionTime
    ? ` since ${c.lastTransitionTime} (${formatAge(isoAge(ctx.now, c.lastTransitionTime))})`
    : '';
  return `${c.type}=${c.status}${since}: ${c.reason ?? ''} ${c.message ?? ''}`.trim();
}

function taintLine(node: KubeObject): string | undefined {
  const taints: { key?: string; value?: string; effect?: string }[] = Array.isArray(node.spec?.taints)
    ? node.spec.taints
    : [];
  if (taints.length === 0) return undefined;
  return `taints: ${taints.map((t) => `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`).join(', ')}`;
}

function evictedNode(pod: KubeObject): string | undefined {
  return pod.spec?.nodeName;
}

export const nodeHealthAnalyzer: Analyzer = {
  name: NAME,
  domain: 'platform',
  description: 'NotReady nodes (with since when), node pressure conditions, and the pods they evicted or stranded.',
  needs: ['nodes', 'pods', 'events'],
  analyze(ctx: AnalyzerContext): FindingInput[] {
    const findings: FindingInput[] = [];
    const pods = namespacePods(ctx);
    const evicted = pods.filter((p) => p.status?.phase === 'Failed' && p.status?.reason === 'Evicted');
    const nodes = canSee(ctx, 'nodes') ? ctx.objects('nodes') : [];

    for (const node of nodes) {
      const name = node.metadata.name;
      const here = pods.filter(
        (p) => p.spec?.nodeName === name && p.status?.phase !== 'Failed' && p.status?.phase !== 'Succeeded',
      );
      const evictedHere = evicted.filter((p) => evictedNode(p) === name);
      const relevant = here.length > 0 || evictedHere.length > 0;
      const ready = condition(node, 'Ready');
      const nodeEvents = findEvents(ctx, { kind: 'Node', name }).filter(
        (e) => e.type === 'Warning' || /NotReady|Pressure/.test(e.reason),
      );
      if (ready && ready.status !== 'True') {
        const evidence = [conditionLine(ctx, ready)];
        const taints = taintLine(node);
        if (taints) evidence.push(taints);
        if (here.length > 0) {
          const states = here
            .slice(0, 4)
            .map(
              (p) =>
                `${p.metadata.name} (${p.metadata.deletionTimestamp ? 'Terminating' : p.status?.phase}, ready=${podCondition(p, 'Ready')?.status ?? '?'})`,
            );
          evidence.push(`${here.length} pod(s) of ${ctx.namespace} on the node: ${states.join(', ')}`);
        }
        if (nodeEvents[0]) evidence.push(describeEvent(nodeEvents[0], ctx.now));
        if (node.spec?.unschedulable) evidence.push('node is cordoned (unschedulable)');
        findings.push({
          code: 'NODE_NOT_READY',
          analyzer: NAME,
          domain: 'platform',
          severity: relevant ? 'critical' : 'medium',
          resource: ref('Node', name),
          message: `Node ${name} is NotReady (Ready=${ready.status}, ${ready.reason ?? 'no reason'}) for ${formatAge(isoAge(ctx.now, ready.lastTransitionTime))}${relevant ? `; ${here.length} pod(s) of ${ctx.namespace} are stranded on it` : ''}.`,
          evidence,
          confidence: relevant ? 0.95 : 0.7,
          related: here.slice(0, 5).map((p) => podRef(p)),
          remediation: ['check-kubelet', 'drain-node'],
        });
      }
      for (const type of PRESSURE) {
        const c = condition(node, type);
        if (c?.status !== 'True') continue;
        const evidence = [conditionLine(ctx, c)];
        const threshold = nodeEvents.find((e) =>
          /EvictionThresholdMet|FreeDiskSpaceFailed|ImageGCFailed|SystemOOM/.test(e.reason),
        );
        if (threshold) evidence.push(describeEvent(threshold, ctx.now));
        if (evictedHere.length > 0)
          evidence.push(`${evictedHere.length} pod(s) of ${ctx.namespace} evicted from the node`);
        const taints = taintLine(node);
        if (taints) evidence.push(taints);
        findings.push({
          code: 'NODE_PRESSURE',
          analyzer: NAME,
          domain: 'platform',
          severity: relevant ? 'high' : 'medium',
          resource: ref('Node', name),
          message: `Node ${name} reports ${type} since ${formatAge(isoAge(ctx.now, c.lastTransitionTime))}${evictedHere.length > 0 ? ` and evicted ${evictedHere.length} pod(s) of ${ctx.namespace}` : ''}.`,
          evidence,
          confidence: relevant ? 0.9 : 0.65,
          related: evictedHere.slice(0, 5).map((p) => podRef(p)),
          remediation: [type === 'DiskPressure' ? 'free-node-disk' : 'reduce-node-memory', 'drain-node'],
        });
      }
    }

    for (const [, group] of groupBy(evicted, (p) => ownerKey(ctx, p))) {
      // Evicted pods keep no finish time; the eviction event or the pod's start tells how old the eviction is.
      const pod = group[0]!;
      const events = findEvents(ctx, {
        kind: 'Pod',
        name: pod.metadata.name,
        namespace: ctx.namespace,
        reasons: ['Evicted'],
      });
      const when =
        events[0]?.last?.toISOString() ??
        podCondition(pod, 'DisruptionTarget')?.lastTransitionTime ??
        pod.status?.startTime;
      const age = isoAge(ctx.now, when);
      const nodeName = evictedNode(pod);
      const nodeObj = nodes.find((n) => n.metadata.name === nodeName);
      const nodeStillBad =
        nodeObj !== undefined &&
        (condition(nodeObj, 'Ready')?.status !== 'True' ||
          PRESSURE.some((t) => condition(nodeObj, t)?.status === 'True'));
      const current = age <= HOUR || nodeStillBad;
      const owner = ownerOf(ctx, pod);
      findings.push({
        code: 'POD_EVICTED',
        analyzer: NAME,
        domain: 'platform',
        severity: current ? 'medium' : 'low',
        resource: podRef(pod),
        message: `${group.length} pod(s)${owner ? ` of ${owner.kind} ${owner.name}` : ''} were evicted from node ${nodeName ?? '?'} ${formatAge(age)} ago.`,
        evidence: [
          `Evicted: ${pod.status?.message ?? ''}`,
          ...(events[0] ? [describeEvent(events[0], ctx.now)] : []),
          `${group.length} evicted pod(s) left in Failed phase${nodeStillBad ? `; node ${nodeName} still unhealthy` : ''}`,
        ],
        confidence: current ? 0.8 : 0.4,
        related: [...(owner ? [owner] : []), ...(nodeName ? [ref('Node', nodeName)] : [])],
        remediation: ['clean-evicted-pods'],
      });
    }
    return findings;
  },
};
