import type { KubeObject } from '../../cluster/types.js';

/**
 * What the cluster holds that a request's words can point at besides names (the hosts its entries serve, the images
 * its pods run), and which namespaces hold a current fault of the kind the words describe. locate.ts weighs these;
 * nothing here reads the cluster.
 */

/** A namespace the evidence points at, with why. */
export interface Pointer {
  namespace: string;
  weight: number;
  reason: string;
}

/** What a person noticed, in the terms of the faults that can cause it. */
export type Symptom = 'serving' | 'batch' | 'tls';

/** A fault a namespace holds now. `fits` lists the symptoms it explains. */
export interface CurrentFault {
  namespace: string;
  reason: string;
  fits: Symptom[];
}

/** A hostname as typed in a URL or alone: at least two labels and a top-level domain of letters. */
const HOST_RE =
  /(?:^|[\s<(|"'`])(?:[a-z][a-z0-9+.-]*:\/\/)?((?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,63})(?=[:/\s>)|"'`,;!?]|\.(?:\s|$)|$)/gi;

/** File names and Kubernetes-internal names that look like hosts but are not what a user browses to. */
const NOT_A_HOST = /\.(?:ya?ml|json|js|ts|py|go|java|log|txt|conf|sh|local|internal|svc|cluster)$/i;

/** Hostnames in the words: "profile.acme.app returning 503", "https://claims.example.com/ shows …". */
export function hostsIn(text: string): string[] {
  const hosts = new Set<string>();
  for (const m of text.matchAll(HOST_RE)) {
    const host = (m[1] ?? '').toLowerCase();
    if (host.split('.').length >= 2 && !NOT_A_HOST.test(host)) hosts.add(host);
  }
  return [...hosts];
}

/** Whether `pattern` (possibly `*.example.com`) serves `host`. */
function serves(pattern: string, host: string): boolean {
  const p = pattern.toLowerCase();
  if (p.startsWith('*.')) return host.endsWith(p.slice(1)) && host.split('.').length === p.split('.').length;
  return p === host;
}

/**
 * The namespaces whose entries serve a host the words name: an Ingress rule or TLS host, a Route, an Istio
 * VirtualService or a Gateway API HTTPRoute. A VirtualService or HTTPRoute that sends the host to a Service in another
 * namespace points at that namespace too, where the serving path ends.
 */
export function hostPointers(hosts: readonly string[], entries: readonly KubeObject[], weight: number): Pointer[] {
  if (hosts.length === 0) return [];
  const out: Pointer[] = [];
  for (const o of entries) {
    const ns = o.metadata.namespace;
    if (!ns) continue;
    const spec = records([o.spec])[0] ?? {};
    const declared: string[] = [];
    if (o.kind === 'Ingress') {
      for (const r of records(spec.rules)) declared.push(...strings([r.host]));
      for (const t of records(spec.tls)) declared.push(...strings(t.hosts));
    } else if (o.kind === 'Route') {
      declared.push(...strings([spec.host]));
    } else {
      declared.push(...strings(spec.hosts), ...strings(spec.hostnames));
    }
    const host = hosts.find((h) => declared.some((d) => serves(d, h)));
    if (!host) continue;
    out.push({ namespace: ns, weight, reason: `${o.kind} ${o.metadata.name} serves ${host}` });
    for (const target of backendNamespaces(o)) {
      if (target !== ns) out.push({ namespace: target, weight, reason: `${host} is served from there` });
    }
  }
  return out;
}

/** Namespaces a VirtualService or HTTPRoute sends its traffic to, when not its own. */
function backendNamespaces(o: KubeObject): string[] {
  const spec = records([o.spec])[0] ?? {};
  const out = new Set<string>();
  if (o.kind === 'VirtualService') {
    for (const h of records(spec.http)) {
      for (const r of records(h.route)) {
        // `svc.ns.svc.cluster.local` or `svc.ns`: the second label is the namespace.
        const destination = records([r.destination])[0];
        const parts = (strings([destination?.host])[0] ?? '').split('.');
        if (parts.length >= 2 && parts[1]) out.add(parts[1]);
      }
    }
  } else if (o.kind === 'HTTPRoute') {
    for (const rule of records(spec.rules)) {
      for (const b of records(rule.backendRefs)) for (const ns of strings([b.namespace])) out.add(ns);
    }
  }
  return [...out];
}

/** Image references as typed: with a tag or a registry path ("ledger-sync:2.7.1", "ghcr.io/acme/ledger-sync"). */
function imageRefsIn(text: string): string[] {
  const refs = new Set<string>();
  for (const raw of text.split(/\s+/)) {
    const token = raw.replace(/^[`'"(<[]+|[`'")>\],;!?.]+$/g, '').toLowerCase();
    if (token.includes('://') || !/[:/]/.test(token) || !/[a-z]/.test(token)) continue;
    if (/^[a-z0-9][a-z0-9._/-]*(?::[a-z0-9_][a-z0-9_.-]*)?(?:@sha256:[a-f0-9]+)?$/.test(token)) refs.add(token);
  }
  return [...refs];
}

/** An image's repository name without registry, path or tag: `ghcr.io/acme/ledger-sync:2.7.1` → `ledger-sync`. */
function repositoryName(image: string): string {
  const last = image.toLowerCase().split('@')[0]?.split('/').pop() ?? '';
  return last.split(':')[0] ?? '';
}

/**
 * The namespaces whose workloads or CronJobs run an image the words name: a reference names it outright; a word that
 * is only the repository's name ("the ledger-sync pods") points at it with half the weight.
 */
export function imagePointers(
  text: string,
  words: ReadonlySet<string>,
  objects: readonly KubeObject[],
  weight: number,
): Pointer[] {
  const refs = imageRefsIn(text);
  const out: Pointer[] = [];
  const seen = new Set<string>();
  for (const o of objects) {
    const ns = o.metadata.namespace;
    if (!ns) continue;
    for (const image of imagesOf(o)) {
      const ref = image.toLowerCase();
      const named = refs.find((r) => ref === r || ref.endsWith(`/${r}`) || ref.startsWith(r) || ref.includes(`/${r}`));
      const repository = repositoryName(ref);
      const byName = !named && repository.length >= 4 && words.has(repository) && o.metadata.name !== repository;
      if ((!named && !byName) || seen.has(`${ns}/${ref}`)) continue;
      seen.add(`${ns}/${ref}`);
      out.push({
        namespace: ns,
        weight: named ? weight : weight / 2,
        reason: `${o.kind} ${o.metadata.name} runs ${image}`,
      });
    }
  }
  return out;
}

function imagesOf(o: KubeObject): string[] {
  type Spec = { containers?: Array<{ image?: string }>; initContainers?: Array<{ image?: string }> };
  const spec = o.spec as
    | (Spec & { template?: { spec?: Spec }; jobTemplate?: { spec?: { template?: { spec?: Spec } } } })
    | undefined;
  const pod: Spec | undefined = spec?.jobTemplate?.spec?.template?.spec ?? spec?.template?.spec ?? spec;
  return [...records(pod?.initContainers), ...records(pod?.containers)].flatMap((c) => strings([c.image]));
}

/**
 * The symptoms the words describe, as the faults that can cause them: an HTTP error or timeout at an entry is a
 * broken serving path; a scheduled run that did not happen is a failing Job; a certificate error is a certificate.
 */
export function symptomsIn(text: string): Symptom[] {
  const t = text.toLowerCase();
  const out: Symptom[] = [];
  if (
    /\b5\d\d\b|\b5xx\b|bad gateway|gateway time-?out|unavailable|not available|timed? ?out\b|timeout|connection (?:refused|reset)|upstream/.test(
      t,
    )
  )
    out.push('serving');
  if (
    /never (?:ran|run|landed|arrived|happened)|did(?:n'?t| not) run|\bcron|\bjobs?\b|nightly|overnight|batch|\bexport\b/.test(
      t,
    )
  )
    out.push('batch');
  if (/x509|certificate|\bcert\b|\btls\b|\bssl|handshake/.test(t)) out.push('tls');
  return out;
}

/**
 * Faults a namespace holds now beyond its pods' states: a Service with a selector and no ready endpoint, a Job that
 * failed and was not followed by a success of its CronJob, a cert-manager Certificate that is not Ready.
 */
export function currentFaults(
  services: readonly KubeObject[],
  endpoints: readonly KubeObject[],
  jobs: readonly KubeObject[],
  cronjobs: readonly KubeObject[],
  certificates: readonly KubeObject[],
): CurrentFault[] {
  const out: CurrentFault[] = [];
  const ready = new Set(
    endpoints
      .filter((e) => records(e.subsets).some((s) => records(s.addresses).length > 0))
      .map((e) => `${e.metadata.namespace}/${e.metadata.name}`),
  );
  const listed = new Set(endpoints.map((e) => `${e.metadata.namespace}/${e.metadata.name}`));
  for (const s of services) {
    const ns = s.metadata.namespace;
    const key = `${ns}/${s.metadata.name}`;
    const selector = s.spec?.selector as Record<string, string> | undefined;
    if (!ns || !selector || Object.keys(selector).length === 0 || s.spec?.type === 'ExternalName') continue;
    // Only a Service whose Endpoints were read can be said to have none ready.
    if (listed.has(key) && !ready.has(key)) {
      out.push({ namespace: ns, reason: `Service ${s.metadata.name} has no ready endpoint`, fits: ['serving'] });
    }
  }
  const lastSuccess = new Map<string, number>();
  for (const c of cronjobs) {
    const t = Date.parse(String(c.status?.lastSuccessfulTime ?? ''));
    if (Number.isFinite(t)) lastSuccess.set(`${c.metadata.namespace}/${c.metadata.name}`, t);
  }
  for (const j of jobs) {
    const ns = j.metadata.namespace;
    if (!ns) continue;
    const conditions = conditionsOf(j);
    const failed = conditions.find((c) => c.type === 'Failed' && c.status === 'True');
    const owner = strings(
      records(j.metadata.ownerReferences)
        .filter((o) => o.kind === 'CronJob')
        .map((o) => o.name),
    )[0];
    const started = Date.parse(String(j.status?.startTime ?? j.metadata.creationTimestamp ?? ''));
    const since = owner ? lastSuccess.get(`${ns}/${owner}`) : undefined;
    if (since !== undefined && Number.isFinite(started) && since > started) continue;
    if (failed) {
      out.push({
        namespace: ns,
        reason: `Job ${j.metadata.name} failed (${failed.reason ?? 'Failed'})`,
        fits: ['batch'],
      });
    } else if (
      owner &&
      Number(j.status?.active ?? 0) > 0 &&
      Number(j.status?.ready ?? 0) === 0 &&
      !j.status?.completionTime
    ) {
      // A CronJob's run that is still active with no ready pod: what "it never ran" looks like under Forbid.
      out.push({
        namespace: ns,
        reason: `Job ${j.metadata.name} of CronJob ${owner} has no running pod`,
        fits: ['batch'],
      });
    }
  }
  for (const c of certificates) {
    const ns = c.metadata.namespace;
    const conditions = conditionsOf(c);
    const readyCondition = conditions.find((x) => x.type === 'Ready');
    if (ns && readyCondition && readyCondition.status !== 'True') {
      out.push({
        namespace: ns,
        reason: `Certificate ${c.metadata.name} is not Ready (${readyCondition.reason ?? 'unknown'})`,
        fits: ['tls', 'serving'],
      });
    }
  }
  return out;
}

/**
 * The subject of a question about health: "is shop ok?", "is checkout healthy now", "are the payments pods fine".
 * A person asking whether X is fine names X as the place to look, whatever else the sentence mentions.
 */
export function healthSubjects(text: string): string[] {
  const out: string[] = [];
  const re =
    /\b(?:is|are)\s+(?:the\s+)?([a-z0-9][a-z0-9.-]*)(?:\s+(?:namespace|app|service|pods?|ns))?\s+(?:still\s+|now\s+|really\s+)?(?:ok|okay|fine|healthy|alright|all right|up|down|broken|working)\b/gi;
  for (const m of text.matchAll(re)) if (m[1]) out.push(m[1].toLowerCase());
  return out;
}

/** The objects of a list field, whatever a malformed object holds there (a string, nulls among entries). */
export function records(value: unknown): Array<Record<string, unknown>> {
  return Array.isArray(value)
    ? value.filter((v): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v))
    : [];
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string' && v !== '') : [];
}

function conditionsOf(o: KubeObject): Array<{ type?: string; status?: string; reason?: string }> {
  return records(o.status?.conditions).map((c) => ({
    type: strings([c.type])[0],
    status: strings([c.status])[0],
    reason: strings([c.reason])[0],
  }));
}
