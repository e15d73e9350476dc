import { ClusterReadError, type KubeObject } from '../cluster/types.js';
import { clipLine } from '../limits.js';
import { decisiveLogLine, parseQuantity } from '../triage/kube/index.js';
import { containerStates, names, onlyCheck, plural, type RawObject, refOf, withCheck, workloadOf } from './objects.js';
import type { AnalyzerResult, SpecialistAnalyzer, SpecialistContext, SpecialistFinding } from './types.js';

/**
 * The compute specialist: what the containers said before they died, what the probes report, what the last rollout
 * changed, whether limits fit, and whether the nodes under the pods are under pressure.
 */

const MAX_LOGS = 6;
const REVISION = 'deployment.kubernetes.io/revision';

async function pods(ctx: SpecialistContext): Promise<KubeObject[]> {
  return ctx.reads.list({ kind: 'pods', namespace: ctx.namespace, maxItems: 200 });
}

const previousLogs: SpecialistAnalyzer = {
  id: 'previous-logs',
  domains: ['compute'],
  async run(ctx) {
    const restarting = (await pods(ctx)).flatMap((pod) =>
      containerStates(pod)
        .filter((c) => c.restartCount > 0)
        .map((c) => ({ pod, c })),
    );
    if (restarting.length === 0) {
      return onlyCheck(
        this.id,
        'previous logs of restarting containers',
        'ruled-out',
        'no container in the namespace has restarted',
      );
    }
    const findings: SpecialistFinding[] = [];
    const quiet: string[] = [];
    const unreadable: string[] = [];
    for (const { pod, c } of restarting.slice(0, MAX_LOGS)) {
      let text: string;
      try {
        text = await ctx.reads.logs({
          namespace: ctx.namespace,
          pod: pod.metadata.name,
          container: c.name,
          previous: true,
          tailLines: 80,
        });
      } catch (error) {
        // The runtime keeps one previous log per container; a container without one is skipped, not fatal.
        if (error instanceof ClusterReadError) {
          unreadable.push(`${pod.metadata.name}/${c.name}`);
          continue;
        }
        throw error;
      }
      const verdict = decisiveLogLine(text);
      if (!verdict) {
        quiet.push(`${pod.metadata.name}/${c.name}`);
        continue;
      }
      const workload = workloadOf(pod);
      findings.push({
        code: 'CONTAINER_PREVIOUS_RUN_FAILED',
        domain: 'compute',
        severity: verdict.score >= 80 ? 'high' : 'medium',
        resource: refOf(pod, 'Pod'),
        related: workload ? [workload] : [],
        message: `Container ${c.name} of pod ${pod.metadata.name} ended its previous run (${plural(c.restartCount, 'restart')}, ${c.lastTerminated?.reason ?? 'exit'} ${c.lastTerminated?.exitCode ?? ''}) after: ${clipLine(verdict.readable ?? verdict.line, 240)}`,
        evidence: [`previous log of ${pod.metadata.name}/${c.name}: ${clipLine(verdict.line, 240)}`],
        confidence: verdict.score >= 80 ? 0.85 : 0.6,
        analyzer: this.id,
      });
    }
    return {
      findings,
      checks: [
        {
          analyzer: this.id,
          what: `previous logs of ${plural(Math.min(restarting.length, MAX_LOGS), 'restarting container')}`,
          outcome: findings.length > 0 ? 'found' : quiet.length > 0 ? 'ruled-out' : 'not-read',
          detail: [
            findings.length > 0 ? `${plural(findings.length, 'container')} logged why it ended` : '',
            quiet.length > 0 ? `no error in the previous runs of ${names(quiet)}` : '',
            unreadable.length > 0 ? `no previous log kept for ${names(unreadable)}` : '',
          ]
            .filter(Boolean)
            .join('; '),
        },
      ],
    };
  },
};

export const probeHistory: SpecialistAnalyzer = {
  id: 'probe-history',
  domains: ['compute', 'networking', 'platform'],
  async run(ctx) {
    const events = await ctx.reads.list({ kind: 'events', namespace: ctx.namespace, maxItems: 500 });
    const unhealthy = events.filter(
      (e) => e['reason'] === 'Unhealthy' || /probe failed/i.test(String(e['message'] ?? '')),
    );
    if (unhealthy.length === 0) {
      return onlyCheck(
        this.id,
        'probe history in the events',
        'ruled-out',
        'no liveness, readiness or startup probe failed in the recorded events',
      );
    }
    const byPod = new Map<string, { count: number; message: string; kind: string }>();
    for (const e of unhealthy) {
      const pod = String((e['involvedObject'] as { name?: string } | undefined)?.name ?? 'unknown');
      const count = Number(e['count'] ?? (e['series'] as { count?: number } | undefined)?.count ?? 1);
      const message = String(e['message'] ?? e['note'] ?? '');
      const prior = byPod.get(pod);
      byPod.set(pod, { count: (prior?.count ?? 0) + count, message, kind: /^(\w+) probe/i.exec(message)?.[1] ?? 'A' });
    }
    const lines = [...byPod.entries()].map(
      ([pod, p]) => `${pod}: ${p.kind} probe failed ×${p.count}: ${clipLine(p.message, 160)}`,
    );
    return onlyCheck(this.id, `probe history of ${plural(byPod.size, 'pod')}`, 'found', lines.slice(0, 3).join('; '));
  },
};

interface TemplateView {
  images: Map<string, string>;
  env: Map<string, string>;
  resources: Map<string, string>;
  probes: Map<string, string>;
}

function templateView(rs: KubeObject): TemplateView {
  const containers = (rs.spec?.template?.spec?.containers ?? []) as RawObject[];
  const view: TemplateView = { images: new Map(), env: new Map(), resources: new Map(), probes: new Map() };
  for (const c of containers) {
    const name = String(c['name']);
    view.images.set(name, String(c['image'] ?? ''));
    for (const e of (c['env'] ?? []) as Array<Record<string, unknown>>) {
      // Values may carry credentials: only whether a variable is set, and where from, is compared.
      view.env.set(`${name}/${String(e['name'])}`, e['valueFrom'] ? JSON.stringify(e['valueFrom']) : 'value');
    }
    view.resources.set(name, JSON.stringify(c['resources'] ?? {}));
    view.probes.set(name, JSON.stringify([c['livenessProbe'], c['readinessProbe'], c['startupProbe']]));
  }
  return view;
}

function diff(older: TemplateView, newer: TemplateView): string[] {
  const out: string[] = [];
  for (const [c, image] of newer.images) {
    const was = older.images.get(c);
    if (was !== undefined && was !== image) out.push(`image of ${c} ${was} → ${image}`);
  }
  const added = [...newer.env.keys()].filter((k) => !older.env.has(k));
  const removed = [...older.env.keys()].filter((k) => !newer.env.has(k));
  if (added.length > 0) out.push(`env added: ${names(added.map((k) => k.split('/')[1] ?? k))}`);
  if (removed.length > 0) out.push(`env removed: ${names(removed.map((k) => k.split('/')[1] ?? k))}`);
  for (const [c, r] of newer.resources)
    if (older.resources.has(c) && older.resources.get(c) !== r) out.push(`resources of ${c} changed`);
  for (const [c, p] of newer.probes)
    if (older.probes.has(c) && older.probes.get(c) !== p) out.push(`probes of ${c} changed`);
  return out;
}

const rolloutHistory: SpecialistAnalyzer = {
  id: 'rollout-history',
  domains: ['compute'],
  async run(ctx) {
    const sets = await ctx.reads.list({ kind: 'replicasets', namespace: ctx.namespace, maxItems: 200 });
    const byOwner = new Map<string, KubeObject[]>();
    for (const rs of sets) {
      const owner = rs.metadata.ownerReferences?.find((o) => o.kind === 'Deployment')?.name;
      if (owner) byOwner.set(owner, [...(byOwner.get(owner) ?? []), rs]);
    }
    const checks: AnalyzerResult['checks'] = [];
    for (const [deployment, revisions] of byOwner) {
      const ordered = [...revisions].sort(
        (a, b) => Number(b.metadata.annotations?.[REVISION] ?? 0) - Number(a.metadata.annotations?.[REVISION] ?? 0),
      );
      const [newest, previous] = ordered;
      if (!newest) continue;
      const n = newest.metadata.annotations?.[REVISION] ?? '?';
      if (!previous) {
        checks.push({
          analyzer: this.id,
          what: `rollout history of deployment ${deployment}`,
          outcome: 'ruled-out',
          detail: `only revision ${n} is kept: no earlier revision to compare`,
        });
        continue;
      }
      const changes = diff(templateView(previous), templateView(newest));
      const p = previous.metadata.annotations?.[REVISION] ?? '?';
      checks.push({
        analyzer: this.id,
        what: `revision ${n} of deployment ${deployment} against revision ${p}`,
        outcome: changes.length > 0 ? 'found' : 'ruled-out',
        detail: changes.length > 0 ? changes.join('; ') : 'same images, environment, resources and probes',
      });
    }
    if (checks.length === 0) {
      checks.push({
        analyzer: this.id,
        what: 'rollout history',
        outcome: 'ruled-out',
        detail: 'no Deployment keeps ReplicaSets here',
      });
    }
    return { findings: [], checks };
  },
};

const limitsFit: SpecialistAnalyzer = {
  id: 'limits',
  domains: ['compute'],
  async run(ctx) {
    const all = await pods(ctx);
    const oom: string[] = [];
    const noLimit: string[] = [];
    for (const pod of all) {
      for (const c of (pod.spec?.containers ?? []) as RawObject[]) {
        const limit = parseQuantity(c['resources']?.limits?.memory);
        if (limit === undefined) noLimit.push(`${pod.metadata.name}/${c['name']}`);
      }
      for (const s of containerStates(pod))
        if (s.lastTerminated?.reason === 'OOMKilled') oom.push(`${pod.metadata.name}/${s.name}`);
    }
    return {
      findings: [],
      checks: [
        {
          analyzer: this.id,
          what: 'resource usage against limits',
          outcome: 'not-read',
          detail: 'live usage (metrics.k8s.io) is not among what calmops reads; judged from terminations instead',
        },
        {
          analyzer: this.id,
          what: `memory limits of ${plural(all.length, 'pod')}`,
          outcome: oom.length > 0 ? 'found' : 'ruled-out',
          detail:
            oom.length > 0
              ? `OOMKilled last time: ${names(oom)}`
              : `no container was OOMKilled${noLimit.length > 0 ? `; without a memory limit: ${names(noLimit)}` : ''}`,
        },
      ],
    };
  },
};

export const nodePressure: SpecialistAnalyzer = {
  id: 'node-pressure',
  domains: ['compute', 'platform'],
  async run(ctx) {
    const nodeNames = [...new Set((await pods(ctx)).map((p) => String(p.spec?.nodeName ?? '')).filter(Boolean))];
    if (nodeNames.length === 0) {
      return onlyCheck(this.id, 'node pressure', 'ruled-out', 'no pod of the namespace is on a node');
    }
    const findings: SpecialistFinding[] = [];
    const fine: string[] = [];
    for (const name of nodeNames.slice(0, 6)) {
      const node = await ctx.reads.get({ kind: 'nodes', name });
      const conditions = (node.status?.conditions ?? []) as Array<{ type: string; status: string; message?: string }>;
      const bad = conditions.filter((c) =>
        c.type === 'Ready' ? c.status !== 'True' : /Pressure|Unavailable/.test(c.type) && c.status === 'True',
      );
      if (bad.length === 0) {
        fine.push(name);
        continue;
      }
      findings.push({
        code: bad.some((c) => c.type === 'Ready') ? 'NODE_NOT_READY' : 'NODE_UNDER_PRESSURE',
        domain: 'compute',
        severity: 'high',
        resource: { kind: 'Node', name },
        related: [],
        message: `Node ${name} hosts pods of ${ctx.namespace} and reports ${bad.map((c) => `${c.type}=${c.status}`).join(', ')}`,
        evidence: bad.map((c) => `${c.type}=${c.status}: ${clipLine(c.message ?? '', 200)}`),
        confidence: 0.8,
        analyzer: this.id,
        explains: true,
      });
    }
    return withCheck(
      this.id,
      findings,
      `conditions of ${plural(Math.min(nodeNames.length, 6), 'node')} under the namespace's pods`,
      fine.length > 0 ? `${names(fine)}: Ready, no memory, disk or PID pressure` : 'every node is under pressure',
    );
  },
};

export const COMPUTE_ANALYZERS: readonly SpecialistAnalyzer[] = [
  previousLogs,
  probeHistory,
  rolloutHistory,
  limitsFit,
  nodePressure,
];
