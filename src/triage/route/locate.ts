import { setMaxListeners } from 'node:events';
import type { ClusterReader, KubeObject, ResourceKind } from '../../cluster/types.js';
import { byCodePoint } from '../../code-point-order.js';
import { stripChatMarkup } from './dictionary.js';
import { AmbiguousNamespaceError, InvalidNamespaceError, type NamespaceCandidate } from './errors.js';
import {
  type CurrentFault,
  currentFaults,
  healthSubjects,
  hostPointers,
  hostsIn,
  imagePointers,
  records,
  symptomsIn,
} from './locate-evidence.js';

/**
 * People name what they see (a pod, a deployment, a service, the team's namespace) rather than `in <namespace>`.
 * When the request names no namespace, its words are matched against what the cluster holds: namespace names, and
 * the names of workloads, pods, services and routes in every namespace. The read is bounded and read-only.
 */

export const LOCATE_MAX_ITEMS = 2000;

const KINDS: ReadonlyArray<{ kind: ResourceKind; label: string; weight: number }> = [
  { kind: 'deployments', label: 'Deployment', weight: 6 },
  { kind: 'statefulsets', label: 'StatefulSet', weight: 6 },
  { kind: 'daemonsets', label: 'DaemonSet', weight: 5 },
  { kind: 'cronjobs', label: 'CronJob', weight: 6 },
  { kind: 'services', label: 'Service', weight: 5 },
  { kind: 'routes', label: 'Route', weight: 5 },
  { kind: 'ingresses', label: 'Ingress', weight: 4 },
  { kind: 'persistentvolumeclaims', label: 'PersistentVolumeClaim', weight: 5 },
  { kind: 'configmaps', label: 'ConfigMap', weight: 4 },
  { kind: 'pods', label: 'Pod', weight: 4 },
];

/** What the words can point at besides names, and what says whether a namespace is in trouble now. */
const EVIDENCE: readonly ResourceKind[] = ['virtualservices', 'httproutes', 'endpoints', 'jobs', 'certificates'];

/** A host names one entry of the cluster: it outweighs a namespace's name. */
const HOST_WEIGHT = 12;
/** An image reference with a tag or registry path names what runs it. */
const IMAGE_WEIGHT = 8;
/** "is shop ok?": the subject of a question about health is where to look. */
const SUBJECT_WEIGHT = 12;

/** What current trouble adds to a namespace the words matched: a Deployment's name is 6, a namespace's 10. */
const TROUBLE_WEIGHT = 4;

/** Platform namespaces match only when nothing of an application does: "coredns" is kube-system's, "api" rarely. */
const PLATFORM = /^(kube-|openshift|default$)/;

export interface LocatedNamespace {
  namespace: string;
  why: string;
  /** Requests sent to the cluster while locating. */
  requests: number;
}

export interface LocateOptions {
  /**
   * The namespace an "in x" phrase of the words named. It wins when the cluster holds it and the evidence does not
   * point elsewhere more strongly; one the cluster does not hold ("in grafana") is only a word.
   */
  spoken?: string;
}

export async function locateNamespace(
  text: string,
  reader: ClusterReader,
  signal: AbortSignal,
  options: LocateOptions = {},
): Promise<LocatedNamespace> {
  const words = candidateWords(text);
  const cluster = await readCluster(reader, signal);
  const { namespaces, byKind, of, requests } = cluster;
  // A cluster always lists its namespaces; a snapshot may hold none, and then its objects say which exist.
  const listed = (namespaces ?? []).map((n) => n.metadata.name);
  const names =
    listed.length > 0
      ? listed
      : [...new Set(byKind.flat().flatMap((o) => (o.metadata.namespace ? [o.metadata.namespace] : [])))].sort();
  // A cluster whose namespaces could not be listed cannot deny the one an "in x" named: it stands.
  const spoken =
    options.spoken !== undefined && (listed.length === 0 || names.includes(options.spoken))
      ? options.spoken
      : undefined;
  const { scores, add } = namespaceScores(spoken);
  const subjects = scoreWords(text, words, names, spoken, cluster, add);
  const pods = of('pods');
  // Words point; the cluster decides between what they point at: a namespace the words matched that is in trouble
  // now outweighs one that only shares a word with the request.
  const faultsOutsidePods = currentFaults(
    of('services'),
    cluster.endpoints,
    cluster.jobs,
    of('cronjobs'),
    cluster.certificates,
  );
  const faults = faultsByNamespace(pods, faultsOutsidePods);
  if (scores.size > 1) {
    for (const [ns, list] of faults) if (scores.has(ns) && list[0]) add(ns, TROUBLE_WEIGHT, list[0].reason);
  }
  const ranked = [...scores.entries()]
    .map(([namespace, s]) => ({ namespace, ...s }))
    .sort((a, b) => b.score - a.score || byCodePoint(a.namespace, b.namespace));
  const [best, second] = ranked;
  if (!best) {
    // Nothing else the words name is in the cluster: the "in x" is all there is to go on.
    if (options.spoken) return { namespace: options.spoken, why: `namespace from "in ${options.spoken}"`, requests };
    if (names.length === 0) {
      throw new InvalidNamespaceError(
        '',
        'no namespace given, and the cluster lists none that could be read; name it ("in payments") or pass it explicitly',
      );
    }
    return sweepCluster(names, pods, of('deployments'), requests, faultsOutsidePods);
  }
  if (second && second.score * 1.5 > best.score) {
    return chooseAmongClose(text, words, ranked, best, spoken, subjects, faults, requests);
  }
  return {
    namespace: best.namespace,
    why: `namespace "${best.namespace}" from the cluster: ${best.reasons.join('; ')}`,
    requests,
  };
}

interface ClusterRead {
  namespaces: KubeObject[] | undefined;
  nodes: KubeObject[] | undefined;
  virtualServices: KubeObject[];
  httpRoutes: KubeObject[];
  endpoints: KubeObject[];
  jobs: KubeObject[];
  certificates: KubeObject[];
  byKind: KubeObject[][];
  of: (kind: ResourceKind) => KubeObject[];
  requests: number;
}

interface Ranked {
  namespace: string;
  score: number;
  reasons: string[];
}

type AddScore = (namespace: string | undefined, score: number, reason: string) => void;

/** Everything the search matches words against, read at once under the one deadline. */
async function readCluster(reader: ClusterReader, signal: AbortSignal): Promise<ClusterRead> {
  // Every list of the search shares the one deadline signal.
  setMaxListeners((KINDS.length + EVIDENCE.length) * 4, signal);
  let requests = 0;
  const list = async (kind: ResourceKind): Promise<KubeObject[]> => {
    requests++;
    try {
      return await reader.list({ kind, maxItems: LOCATE_MAX_ITEMS }, signal);
    } catch {
      // A kind the cluster does not serve (routes off OpenShift) or may not be read narrows the search; no more.
      return [];
    }
  };
  const [namespaces, nodes, evidence, ...byKind] = await Promise.all([
    list('namespaces'),
    list('nodes'),
    Promise.all(EVIDENCE.map((kind) => list(kind))),
    ...KINDS.map((k) => list(k.kind)),
  ]);
  const [virtualServices = [], httpRoutes = [], endpoints = [], jobs = [], certificates = []] = evidence;
  const of = (kind: ResourceKind) => byKind[KINDS.findIndex((k) => k.kind === kind)] ?? [];
  return { namespaces, nodes, virtualServices, httpRoutes, endpoints, jobs, certificates, byKind, of, requests };
}

/** Each namespace's score and first reasons; a platform namespace weighs a quarter unless spoken. */
function namespaceScores(spoken: string | undefined): {
  scores: Map<string, { score: number; reasons: string[] }>;
  add: AddScore;
} {
  const scores = new Map<string, { score: number; reasons: string[] }>();
  const add = (namespace: string | undefined, score: number, reason: string) => {
    if (!namespace) return;
    const entry = scores.get(namespace) ?? { score: 0, reasons: [] };
    // A platform namespace weighs a quarter, unless the words say "in" it.
    entry.score += PLATFORM.test(namespace) && namespace !== spoken ? score / 4 : score;
    if (entry.reasons.length < 3 && !entry.reasons.includes(reason)) entry.reasons.push(reason);
    scores.set(namespace, entry);
  };
  return { scores, add };
}

/**
 * What the words name: namespaces, objects in them, hosts, images, the subject of a health question and nodes.
 * Returns the subjects of the health question.
 */
function scoreWords(
  text: string,
  words: Set<string>,
  names: readonly string[],
  spoken: string | undefined,
  cluster: ClusterRead,
  add: AddScore,
): string[] {
  const { nodes, virtualServices, httpRoutes, byKind, of } = cluster;
  if (spoken && !names.includes(spoken)) add(spoken, 10, `"${spoken}" holds objects that were read`);
  for (const name of names) {
    if (words.has(name)) add(name, 10, `"${name}" is a namespace`);
    else
      for (const part of name.split('-'))
        if (part.length >= 3 && words.has(part)) add(name, 3, `"${part}" is part of the namespace's name`);
  }
  KINDS.forEach((k, i) => {
    for (const o of byKind[i] ?? []) {
      const name = o.metadata.name;
      const base = k.kind === 'pods' ? workloadOfPod(o) : name;
      const app = k.kind === 'pods' ? appLabel(o) : undefined;
      if (words.has(name)) add(o.metadata.namespace, k.weight + 2, `"${name}" is a ${k.label} there`);
      else if (base !== name && words.has(base)) add(o.metadata.namespace, k.weight, `"${base}" runs pods there`);
      else if (app && words.has(app)) add(o.metadata.namespace, k.weight, `pods of app "${app}" run there`);
      else if (k.kind !== 'pods' && k.kind !== 'configmaps') {
        // "the exports" for CronJob nightly-export: a word that is one part of a longer name, weakly.
        const part = base.split('-').find((p) => p.length >= 2 && (words.has(p) || words.has(`${p}s`)));
        if (part) add(o.metadata.namespace, k.weight / 3, `"${part}" is part of ${k.label} ${name}`);
      }
    }
  });
  // A host is served by one entry; an image reference is run by one workload; a question about health has a subject.
  const entries = [...of('ingresses'), ...of('routes'), ...virtualServices, ...httpRoutes];
  for (const p of hostPointers(hostsIn(text), entries, HOST_WEIGHT)) add(p.namespace, p.weight, p.reason);
  const runners = [...of('deployments'), ...of('statefulsets'), ...of('daemonsets'), ...of('cronjobs')];
  for (const p of imagePointers(text, words, runners, IMAGE_WEIGHT)) add(p.namespace, p.weight, p.reason);
  const subjects = healthSubjects(stripChatMarkup(text));
  for (const subject of subjects) {
    if (names.includes(subject)) add(subject, SUBJECT_WEIGHT, `the question asks whether ${subject} is fine`);
  }
  // A node named in the request points at the applications whose pods run there, the unhealthy ones most.
  const pods = of('pods');
  for (const node of nodes ?? []) {
    const full = node.metadata.name;
    const short = full.split('.')[0] as string;
    if (!words.has(full) && !words.has(short)) continue;
    for (const pod of pods) {
      if (pod.spec?.nodeName !== full) continue;
      const ready = records(pod.status?.conditions).some((c) => c.type === 'Ready' && c.status === 'True');
      add(pod.metadata.namespace, ready ? 1 : 3, `its pods run on node ${short}`);
    }
  }
  return subjects;
}

/** Several namespaces fit the words about equally: an "in x", a health question or a current fault decides. */
function chooseAmongClose(
  text: string,
  words: Set<string>,
  ranked: readonly Ranked[],
  best: Ranked,
  spoken: string | undefined,
  subjects: readonly string[],
  faults: Map<string, CurrentFault[]>,
  requests: number,
): LocatedNamespace {
  const near = ranked.filter((r) => r.score * 1.5 > best.score).slice(0, 5);
  // An "in x" the cluster holds is set aside only for another namespace the words also name outright.
  const close =
    spoken && near.some((c) => c.namespace === spoken)
      ? near.filter((c) => c.namespace === spoken || words.has(c.namespace))
      : near;
  if (spoken && close.length === 1) {
    return {
      namespace: spoken,
      why: `namespace from "in ${spoken}"; the cluster does not point elsewhere more strongly`,
      requests,
    };
  }
  // A question about one of them ("is shop ok after the kyverno hiccup?") is about that one.
  const asked = close.filter((c) => subjects.includes(c.namespace));
  if (asked.length === 1 && asked[0]) {
    return {
      namespace: asked[0].namespace,
      why: `namespace "${asked[0].namespace}" from the cluster: the question asks whether ${asked[0].namespace} is fine; ${asked[0].reasons.join('; ')}`,
      requests,
    };
  }
  // Several namespaces fit the words about equally: the one whose current fault explains what the person noticed is
  // the one they mean; among namespaces the words name with "in", the only one in trouble at all.
  const symptoms = symptomsIn(text);
  const explains = (ns: string) => {
    const list = faults.get(ns) ?? [];
    if (list.length === 0) return 0;
    return list.some((f) => f.fits.some((s) => symptoms.includes(s))) ? 2 : 1;
  };
  const byFit = close.map((c) => ({ ...c, fit: explains(c.namespace) })).sort((a, b) => b.fit - a.fit);
  const [top, next] = byFit;
  if (top && (top.fit === 2 || (top.fit === 1 && spoken)) && (!next || next.fit < top.fit)) {
    const fault =
      (faults.get(top.namespace) ?? []).find((f) => f.fits.some((s) => symptoms.includes(s))) ??
      faults.get(top.namespace)?.[0];
    return {
      namespace: top.namespace,
      why: `namespace "${top.namespace}" from the cluster: ${top.reasons.join('; ')}; of ${close.map((c) => c.namespace).join(', ')}, only it holds a current fault that explains the request (${fault?.reason ?? 'trouble now'})`,
      requests,
    };
  }
  if (spoken && close.some((c) => c.namespace === spoken)) {
    return {
      namespace: spoken,
      why: `namespace from "in ${spoken}"; the cluster does not point elsewhere more strongly`,
      requests,
    };
  }
  const candidates: NamespaceCandidate[] = close.map((c) => ({ namespace: c.namespace, why: c.reasons.join('; ') }));
  throw new AmbiguousNamespaceError(
    `no namespace given, and the request matches several: ${candidates.map((c) => `${c.namespace} (${c.why})`).join(', ')}; name one ("in ${candidates[0]?.namespace}")`,
    candidates,
  );
}

/**
 * Words that name no namespace and nothing in one ("checkout is slow", "anything wrong?"): the cluster is swept,
 * worst first, from the pods and Deployments already read. One namespace with current trouble is the answer;
 * several of similar weight are offered as candidates; a cluster with none is answered from its busiest namespace,
 * with what was checked across all of them.
 */
function sweepCluster(
  names: readonly string[],
  pods: readonly KubeObject[],
  deployments: readonly KubeObject[],
  requests: number,
  faults: readonly CurrentFault[] = [],
): LocatedNamespace {
  const trouble = new Map<string, { score: number; reasons: string[] }>();
  const note = (namespace: string | undefined, score: number, reason: string) => {
    if (!namespace) return;
    const entry = trouble.get(namespace) ?? { score: 0, reasons: [] };
    // A platform namespace's trouble is reached from the application it hurts; alone, it is still the answer.
    entry.score += PLATFORM.test(namespace) ? score / 4 : score;
    if (entry.reasons.length < 3 && !entry.reasons.includes(reason)) entry.reasons.push(reason);
    trouble.set(namespace, entry);
  };
  const busy = new Map<string, number>();
  for (const pod of pods) {
    const ns = pod.metadata.namespace;
    if (ns) busy.set(ns, (busy.get(ns) ?? 0) + 1);
    const why = podTrouble(pod);
    if (why) note(ns, 1, why);
  }
  for (const d of deployments) {
    const want = typeof d.spec?.replicas === 'number' ? d.spec.replicas : 1;
    const have = typeof d.status?.availableReplicas === 'number' ? d.status.availableReplicas : 0;
    if (want > 0 && have < want)
      note(d.metadata.namespace, 1, `Deployment ${d.metadata.name} has ${have}/${want} available`);
  }
  for (const f of faults) note(f.namespace, 1, f.reason);
  const ranked = [...trouble.entries()]
    .map(([namespace, t]) => ({ namespace, ...t }))
    .sort((a, b) => b.score - a.score || byCodePoint(a.namespace, b.namespace));
  const checked = `${names.length} namespaces, ${pods.length} pods and ${deployments.length} Deployments read${pods.length >= LOCATE_MAX_ITEMS ? ' (pods only in part)' : ''}`;
  const [worst, next] = ranked;
  if (worst && next && next.score * 1.5 > worst.score) {
    const close = ranked.filter((r) => r.score * 1.5 > worst.score).slice(0, 5);
    const candidates: NamespaceCandidate[] = close.map((c) => ({ namespace: c.namespace, why: c.reasons.join('; ') }));
    throw new AmbiguousNamespaceError(
      `no namespace named; the cluster sweep (${checked}) finds trouble in several: ${candidates.map((c) => `${c.namespace} (${c.why})`).join(', ')}; name one ("in ${candidates[0]?.namespace}")`,
      candidates,
    );
  }
  if (worst) {
    return {
      namespace: worst.namespace,
      why: `no namespace named; the cluster sweep (${checked}) finds ${next ? 'the most' : 'current'} trouble ${next ? '' : 'only '}in "${worst.namespace}": ${worst.reasons.join('; ')}${
        next
          ? `; less in ${ranked
              .slice(1, 4)
              .map((r) => r.namespace)
              .join(', ')}`
          : ''
      }`,
      requests,
    };
  }
  const busiest =
    [...busy.entries()]
      .filter(([ns]) => !PLATFORM.test(ns))
      .sort((a, b) => b[1] - a[1] || byCodePoint(a[0], b[0]))[0]?.[0] ??
    names.find((n) => !PLATFORM.test(n)) ??
    (names[0] as string);
  return {
    namespace: busiest,
    why: `no namespace named; the cluster sweep (${checked}) finds no pod or Deployment in trouble, no Service without a ready endpoint, failed Job or unready Certificate, in any namespace; the busiest, "${busiest}", is triaged in full`,
    requests,
  };
}

/** Each namespace's current faults: its pods' troubles, then what its Services, Jobs and Certificates say. */
function faultsByNamespace(pods: readonly KubeObject[], others: readonly CurrentFault[]): Map<string, CurrentFault[]> {
  const out = new Map<string, CurrentFault[]>();
  const push = (f: CurrentFault) => out.set(f.namespace, [...(out.get(f.namespace) ?? []), f]);
  const seen = new Set<string>();
  for (const pod of pods) {
    const ns = pod.metadata.namespace;
    // A pod that cannot serve breaks whatever it serves; a Job's pod is a scheduled run that fails.
    const owners: unknown = pod.metadata.ownerReferences;
    const batch = Array.isArray(owners) && owners.some((o) => (o as { kind?: unknown } | null)?.kind === 'Job');
    const key = `${ns}/${batch}`;
    if (!ns || seen.has(key)) continue;
    const why = podTrouble(pod);
    if (!why) continue;
    seen.add(key);
    push({ namespace: ns, reason: why, fits: batch ? ['batch'] : ['serving'] });
  }
  for (const f of others) push(f);
  return out;
}

/** Why a pod is in trouble now, or undefined when it is not. */
function podTrouble(pod: KubeObject): string | undefined {
  const phase = pod.status?.phase;
  if (phase === 'Succeeded') return undefined;
  const statuses = [...records(pod.status?.initContainerStatuses), ...records(pod.status?.containerStatuses)] as Array<{
    state?: { waiting?: { reason?: string } | null } | null;
    ready?: boolean;
  }>;
  const waiting = statuses.find((s) => s.state?.waiting?.reason && s.state.waiting.reason !== 'PodInitializing');
  if (waiting) return `pod ${pod.metadata.name} is ${waiting.state?.waiting?.reason}`;
  if (phase === 'Pending') return `pod ${pod.metadata.name} is Pending`;
  if (phase === 'Failed' && pod.status?.reason !== 'Evicted') return `pod ${pod.metadata.name} failed`;
  const ready = (records(pod.status?.conditions) as Array<{ type?: string; status?: string }>).find(
    (c) => c.type === 'Ready',
  );
  if (phase === 'Running' && (ready?.status === 'False' || statuses.some((s) => s.ready === false))) {
    return `pod ${pod.metadata.name} is not ready`;
  }
  return undefined;
}

/**
 * The request's words as they could be spelled in a name: lower case, Slack markup and punctuation stripped, and
 * neighbouring words also joined with a dash ("order worker" → "order-worker").
 */
export function candidateWords(text: string): Set<string> {
  const tokens = stripChatMarkup(text)
    .toLowerCase()
    .replace(/[`*_~"'()[\]{},;:!?]/g, ' ')
    .split(/\s+/)
    .map((w) => w.replace(/^[./-]+|[./-]+$/g, ''))
    .filter((w) => w.length >= 2);
  const words = new Set<string>();
  tokens.forEach((w, i) => {
    // "orders.shop.svc" names a service and its namespace.
    for (const part of w.split('.')) if (part.length >= 2) words.add(part);
    words.add(w);
    const next = tokens[i + 1];
    if (next) words.add(`${w}-${next}`);
  });
  return words;
}

/** A pod's workload name: `payments-7c9f8b6d5-x2x7k` → `payments`, `db-0` → `db`. */
export function workloadOfPod(pod: KubeObject): string {
  const name = pod.metadata.name;
  const hash = pod.metadata.labels?.['pod-template-hash'];
  if (hash) {
    const at = name.lastIndexOf(`-${hash}-`);
    if (at > 0) return name.slice(0, at);
  }
  const owner = pod.metadata.ownerReferences?.[0];
  if (owner?.kind === 'StatefulSet' || owner?.kind === 'DaemonSet') return owner.name;
  if (owner?.kind === 'Job') return owner.name.replace(/-\d{8,}$/, '');
  // Generated suffixes use Kubernetes' safe alphabet (no vowels, no 0/1/3): `redis-cache` keeps its name.
  return name.replace(/-[bcdfghjklmnpqrstvwxz2456789]{5}$/, '').replace(/-[a-f0-9]{8,10}$/, '');
}

/** The application a pod belongs to by its conventional labels: what people call it. */
function appLabel(pod: KubeObject): string | undefined {
  const labels = pod.metadata.labels ?? {};
  return labels['app.kubernetes.io/name'] ?? labels['app'] ?? labels['k8s-app'];
}
