import { conditionOf } from '../../cluster/conditions.js';
import type { KubeObject, ResourceKind } from '../../cluster/types.js';
import { byCodePoint } from '../../code-point-order.js';
import { entriesOf } from '../kube/entries.js';
import type { TriageEnvelope } from './envelope.js';
import type { Domain } from './findings.js';

/**
 * Compact per-domain evidence for the envelope: counts and a few names, never raw objects, so that an envelope
 * stays small (Step Functions payloads, Slack messages) however large the namespace is.
 */

type EvidenceSections = Pick<TriageEnvelope['evidence'], 'infrastructure' | 'workloads' | 'storage' | 'networking'>;
type Section = keyof EvidenceSections;

const NAMES = 5;

const DOMAIN_SECTION: Readonly<Record<Domain, Section>> = {
  compute: 'workloads',
  storage: 'storage',
  networking: 'networking',
  platform: 'infrastructure',
};

type Objects = (kind: ResourceKind) => readonly KubeObject[] | undefined;

const names = (objects: readonly KubeObject[]) => {
  const list = objects.slice(0, NAMES).map((o) => o.metadata.name);
  return objects.length > NAMES ? [...list, `… ${objects.length - NAMES} more`] : list;
};

function countBy(objects: readonly KubeObject[], key: (o: KubeObject) => string | undefined): Record<string, number> {
  const counts: Record<string, number> = {};
  for (let i = 0; i < objects.length; i++) {
    const k = key(objects[i] as KubeObject) ?? 'Unknown';
    counts[k] = (counts[k] ?? 0) + 1;
  }
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => byCodePoint(a, b)));
}

/** Indexed loops over what may be thousands of pods: this runs once per process, uncompiled. */
function podsSummary(pods: readonly KubeObject[]) {
  const restarting: KubeObject[] = [];
  const notReady: KubeObject[] = [];
  for (let i = 0; i < pods.length; i++) {
    const p = pods[i] as KubeObject;
    if (isRestarting(p)) restarting.push(p);
    if (p.status?.phase !== 'Succeeded' && conditionOf(p, 'Ready')?.status !== 'True') notReady.push(p);
  }
  return {
    total: pods.length,
    byPhase: countBy(pods, (p) => p.status?.phase),
    notReady: names(notReady),
    restarting: names(restarting),
  };
}

function isRestarting(p: KubeObject): boolean {
  const statuses = entriesOf<{ restartCount?: unknown }>(p.status?.containerStatuses);
  for (let i = 0; i < statuses.length; i++)
    if (Number((statuses[i] as { restartCount?: unknown }).restartCount) > 0) return true;
  return false;
}

function eventsSummary(events: readonly KubeObject[]) {
  const warnings: KubeObject[] = [];
  for (let i = 0; i < events.length; i++)
    if ((events[i] as KubeObject).type === 'Warning') warnings.push(events[i] as KubeObject);
  const reasons = new Map<string, number>();
  for (const e of warnings) {
    const reason = typeof e.reason === 'string' ? e.reason : 'Unknown';
    reasons.set(reason, (reasons.get(reason) ?? 0) + (typeof e.count === 'number' ? e.count : 1));
  }
  const top = [...reasons.entries()]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, NAMES)
    .map(([reason, count]) => ({ reason, count }));
  return { total: events.length, warnings: warnings.length, topWarningReasons: top };
}

export function summarizeEvidence(
  domain: Domain,
  objects: Objects,
  limited: ReadonlySet<ResourceKind> = new Set(),
): EvidenceSections {
  const sections: Record<Section, Record<string, unknown>> = {
    infrastructure: {},
    workloads: {},
    storage: {},
    networking: {},
  };
  const nodes = objects('nodes');
  if (nodes) {
    sections.infrastructure.nodes = {
      total: nodes.length,
      notReady: names(nodes.filter((n) => conditionOf(n, 'Ready')?.status !== 'True')),
      unschedulable: names(nodes.filter((n) => n.spec?.unschedulable === true)),
    };
  }
  const pods = objects('pods');
  if (pods) sections.workloads.pods = podsSummary(pods);
  for (const kind of ['deployments', 'statefulsets', 'daemonsets', 'replicasets'] as const) {
    const list = objects(kind);
    if (!list) continue;
    const unavailable = list.filter((o) => {
      const want = o.spec?.replicas ?? o.status?.desiredNumberScheduled ?? 1;
      const have = o.status?.readyReplicas ?? o.status?.numberReady ?? 0;
      return have < want;
    });
    sections.workloads[kind] = { total: list.length, unavailable: names(unavailable) };
  }
  const pvcs = objects('persistentvolumeclaims');
  if (pvcs) {
    sections.storage.persistentvolumeclaims = {
      total: pvcs.length,
      byPhase: countBy(pvcs, (p) => p.status?.phase),
      notBound: names(pvcs.filter((p) => p.status?.phase !== 'Bound')),
    };
  }
  const pvs = objects('persistentvolumes');
  if (pvs) sections.storage.persistentvolumes = { total: pvs.length, byPhase: countBy(pvs, (p) => p.status?.phase) };
  const classes = objects('storageclasses');
  if (classes) {
    const isDefault = (c: KubeObject) =>
      c.metadata.annotations?.['storageclass.kubernetes.io/is-default-class'] === 'true' ||
      c.metadata.annotations?.['storageclass.beta.kubernetes.io/is-default-class'] === 'true';
    sections.storage.storageclasses = {
      total: classes.length,
      names: names(classes),
      default: names(classes.filter(isDefault)),
    };
  }
  const services = objects('services');
  if (services) sections.networking.services = { total: services.length, names: names(services) };
  const endpoints = objects('endpoints');
  if (endpoints) {
    const empty = endpoints.filter(
      (e) => !entriesOf<{ addresses?: unknown }>(e.subsets).some((s) => entriesOf(s.addresses).length > 0),
    );
    sections.networking.endpoints = { total: endpoints.length, withoutReadyAddresses: names(empty) };
  }
  for (const kind of ['endpointslices', 'ingresses', 'ingressclasses', 'routes'] as const) {
    const list = objects(kind);
    if (list) sections.networking[kind] = { total: list.length, names: names(list) };
  }
  const configmaps = objects('configmaps');
  if (configmaps) sections.workloads.configmaps = { total: configmaps.length, names: names(configmaps) };
  const events = objects('events');
  if (events) sections[DOMAIN_SECTION[domain]].events = eventsSummary(events);

  // Say so when a list stopped at its read limit: counts are then lower bounds, not the namespace's totals.
  for (const section of Object.values(sections)) {
    for (const [kind, summary] of Object.entries(section)) {
      if (limited.has(kind as ResourceKind) && summary && typeof summary === 'object') {
        (summary as Record<string, unknown>).limitReached = true;
      }
    }
  }
  const out: EvidenceSections = {};
  for (const key of Object.keys(sections) as Section[]) {
    if (Object.keys(sections[key]).length > 0) out[key] = sections[key];
  }
  return out;
}
