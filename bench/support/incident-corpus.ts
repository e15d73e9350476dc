import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as z from 'zod';
import { createClusterReader } from '../../src/cluster/reader.js';
import { loadSnapshotFiles } from '../../src/cluster/snapshot.js';
import type { ClusterReader } from '../../src/cluster/types.js';
import { kubeconfigYaml } from '../../src/snapshot-api/kubeconfig.js';
import { startSnapshotServer } from '../../src/snapshot-api/server.js';
import type { TriageEnvelope } from '../../src/triage/envelope/index.js';
import { silentLogger, triage } from '../../src/triage/index.js';
import { AmbiguousNamespaceError } from '../../src/triage/route/index.js';
import { readYaml as parseYaml } from '../../src/yaml-text.js';

/**
 * The incident corpus (test/fixtures/incidents/) and how calmops is scored on it: each incident is served by the
 * snapshot API server and triaged through the real reader, once with the namespace given (`-n`) and once from the
 * request's words alone, as a person typed them.
 */

const CORPUS_DIR = fileURLToPath(new URL('../../test/fixtures/incidents/', import.meta.url));

const RefSchema = z.object({ kind: z.string(), name: z.string(), namespace: z.string().optional() }).strict();

const CaseSchema = z
  .object({
    title: z.string(),
    now: z.union([z.string(), z.date()]).transform((v) => new Date(v)),
    request: z.string().min(1),
    namespace: z.string(),
    intent: z.string(),
    rootCause: z.array(RefSchema).default([]),
    /** What fails because of the root cause: never a root cause itself. */
    impact: z.array(RefSchema).default([]),
    keyEvidence: z.array(z.string()).default([]),
    tags: z.array(z.string()).default([]),
  })
  .strict();
export type IncidentCase = z.infer<typeof CaseSchema> & { slug: string };

export function loadCorpus(dir = CORPUS_DIR): IncidentCase[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort()
    .map((slug) => {
      const raw: unknown = parseYaml(readFileSync(join(dir, slug, 'case.yaml'), 'utf8'));
      const parsed = CaseSchema.safeParse(raw);
      if (!parsed.success)
        throw new Error(
          `${slug}/case.yaml: ${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message}`,
        );
      return { ...parsed.data, slug };
    });
}

export type Mode = 'namespace' | 'free-text';

export interface CaseResult {
  slug: string;
  mode: Mode;
  healthy: boolean;
  /** The envelope, or why there is none. */
  envelope?: TriageEnvelope;
  refused?: string;
  /** The request named no namespace and several matched: calmops asked which (not a refusal, not an answer). */
  asked?: string[];
  intentOk: boolean;
  namespaceOk: boolean;
  evidenceFound: string[];
  evidenceMissed: string[];
  rootCauseOk: boolean;
  /**
   * The root-cause entity score as ITBench-AA computes it: 0 when an entity to change is missing from `rootCause`,
   * otherwise the share of the entities `rootCause` names that are ones to change. A healthy case scores 1 with no
   * root cause, 0 with any.
   */
  entityScore: number;
  /** Conclusions of absence ("healthy", "no … is running") drawn although a read they depend on was partial. */
  absenceFromPartialRead: string[];
  falseAlarm: boolean;
}

/** Serves a case's snapshot through the snapshot API server and hands the real read-only reader to `use`. */
export async function withCaseCluster<T>(c: IncidentCase, use: (reader: ClusterReader) => Promise<T>): Promise<T> {
  const folder = join(CORPUS_DIR, c.slug);
  const logs = join(folder, 'logs.json');
  const snapshot = await loadSnapshotFiles(join(folder, 'snapshot.yaml'), existsSync(logs) ? logs : undefined);
  const server = await startSnapshotServer({ objects: snapshot.objects, logs: snapshot.logs, port: 0 });
  try {
    return await use(
      createClusterReader({ kubeconfig: { yaml: kubeconfigYaml({ server: server.url }) }, requestTimeoutMs: 10_000 }),
    );
  } finally {
    await server.close();
  }
}

export async function runCase(c: IncidentCase, mode: Mode): Promise<CaseResult> {
  const folder = join(CORPUS_DIR, c.slug);
  const logs = join(folder, 'logs.json');
  const snapshot = await loadSnapshotFiles(join(folder, 'snapshot.yaml'), existsSync(logs) ? logs : undefined);
  const server = await startSnapshotServer({ objects: snapshot.objects, logs: snapshot.logs, port: 0 });
  const healthy = c.intent === 'healthy';
  const base: CaseResult = {
    slug: c.slug,
    mode,
    healthy,
    intentOk: false,
    namespaceOk: false,
    evidenceFound: [],
    evidenceMissed: [...c.keyEvidence],
    rootCauseOk: false,
    entityScore: 0,
    absenceFromPartialRead: [],
    falseAlarm: false,
  };
  try {
    const reader = createClusterReader({
      kubeconfig: { yaml: kubeconfigYaml({ server: server.url }) },
      requestTimeoutMs: 10_000,
    });
    let envelope: TriageEnvelope;
    try {
      envelope = await triage(
        { text: c.request, now: c.now, ...(mode === 'namespace' ? { namespace: c.namespace } : {}) },
        { reader, logger: silentLogger },
      );
    } catch (error) {
      if (error instanceof AmbiguousNamespaceError) return { ...base, asked: error.candidates.map((x) => x.namespace) };
      return { ...base, refused: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
    }
    return { ...base, envelope, ...score(c, envelope) };
  } finally {
    await server.close();
  }
}

function score(c: IncidentCase, e: TriageEnvelope) {
  const healthy = c.intent === 'healthy';
  const text = JSON.stringify({
    summary: e.summary,
    findings: e.findings.map((f) => ({ m: f.message, e: f.evidence, r: f.resource, rel: f.related, o: f.owner })),
    rootCause: e.rootCause,
    nextActions: e.nextActions.map((a) => a.command),
  }).toLowerCase();
  // The envelope is searched as JSON text, so a key is searched as JSON would spell it (quotes escaped).
  const evidenceFound = c.keyEvidence.filter((k) => text.includes(JSON.stringify(k).slice(1, -1).toLowerCase()));
  const causes = e.rootCause.slice(0, Math.max(2, c.rootCause.length + 1));
  const names = (r: { kind: string; name: string }) => `${r.kind.toLowerCase()}/${r.name}`;
  const named = new Set(causes.flatMap((cause) => [cause.resource, ...(cause.chain ?? [])].map(names)));
  const lead = e.rootCause[0] ? names(e.rootCause[0].resource) : undefined;
  return {
    intentOk: healthy ? e.rootCause.length === 0 : e.routing.intent === c.intent,
    namespaceOk: e.routing.namespace === c.namespace,
    evidenceFound,
    evidenceMissed: c.keyEvidence.filter((k) => !evidenceFound.includes(k)),
    // The entity to change leads, or (two faults) each expected entity is among the leading causes and their chains.
    rootCauseOk: healthy
      ? e.rootCause.length === 0
      : c.rootCause.length > 0 &&
        (c.rootCause.length === 1
          ? lead === names(c.rootCause[0] as { kind: string; name: string }) ||
            named.has(names(c.rootCause[0] as { kind: string; name: string }))
          : c.rootCause.every((r) => named.has(names(r)))),
    entityScore: entityScore(c, e),
    absenceFromPartialRead: absenceFromPartialRead(e),
    falseAlarm: healthy && e.rootCause.length > 0,
  };
}

const sameEntity = (
  want: { kind: string; name: string; namespace?: string | undefined },
  got: { kind: string; name: string; namespace?: string | undefined },
) =>
  want.kind.toLowerCase() === got.kind.toLowerCase() &&
  want.name === got.name &&
  (want.namespace === undefined || got.namespace === undefined || want.namespace === got.namespace);

/** ITBench-AA's root-cause entity score for one envelope: recall gates, precision scores. */
function entityScore(c: Pick<IncidentCase, 'intent' | 'rootCause'>, e: Pick<TriageEnvelope, 'rootCause'>) {
  if (c.intent === 'healthy' || c.rootCause.length === 0) return e.rootCause.length === 0 ? 1 : 0;
  const named = e.rootCause.map((r) => r.resource);
  if (!c.rootCause.every((want) => named.some((got) => sameEntity(want, got)))) return 0;
  const right = named.filter((got) => c.rootCause.some((want) => sameEntity(want, got))).length;
  return Math.round((right / named.length) * 1000) / 1000;
}

/**
 * Conclusions of absence the envelope draws, each checked against what was read: "healthy" needs every required
 * evidence type read in full, and a finding that something is not there (not running, not found, missing) needs
 * the reads it rests on. A gap or a list cut at its limit under such a conclusion is a conclusion from a partial
 * read.
 */
function absenceFromPartialRead(e: TriageEnvelope): string[] {
  const out: string[] = [];
  const partial = [
    ...e.evidence.gaps.map((g) => `${g.type} (${g.reason})`),
    ...Object.values({
      ...e.evidence.workloads,
      ...e.evidence.storage,
      ...e.evidence.networking,
      ...e.evidence.infrastructure,
    }).flatMap((v) =>
      v && typeof v === 'object' && (v as { limitReached?: boolean }).limitReached ? ['a list cut at its limit'] : [],
    ),
  ];
  if (e.rootCause.length === 0 && /\bhealthy\b/i.test(e.summary) && partial.length > 0) {
    out.push(`healthy although ${partial.join(', ')} was not read in full`);
  }
  const gapTypes = new Set(e.evidence.gaps.map((g) => g.type));
  for (const f of e.findings) {
    const absent = /\b(?:no [\w .'-]*?(?:is|are) running|not running|does not exist|no such|not found)\b/i.exec(
      f.message,
    );
    if (!absent) continue;
    const rests = ABSENCE_RESTS_ON.find(([pattern]) => pattern.test(f.code))?.[1] ?? [];
    const unread = rests.filter((t) => gapTypes.has(t));
    if (unread.length > 0) out.push(`${f.code} on ${f.resource.kind}/${f.resource.name} without ${unread.join(', ')}`);
  }
  return out;
}

/** The evidence types a finding of absence rests on, by finding code. */
const ABSENCE_RESTS_ON: ReadonlyArray<[RegExp, string[]]> = [
  [/CONTROLLER|PROVISIONER|COREDNS_UNAVAILABLE/, ['controllers', 'dns-pods', 'cluster-pods', 'pods']],
  [/STORAGECLASS/, ['storageclasses']],
  [/SERVICE_MISSING|NO_ENDPOINTS|SELECTS_NO_PODS/, ['services', 'endpoints', 'pods']],
  [/CONFIGMAP_MISSING/, ['configmaps']],
  [/MATCHING_PV/, ['persistentvolumes']],
];

export interface Scores {
  cases: number;
  /** Mean ITBench-AA root-cause entity score over every case (asked and refused score 0). */
  entityScore: number;
  /** Conclusions of absence drawn from partial reads, over every case. */
  absenceFromPartialRead: number;
  intent: number;
  namespace: number;
  keyEvidence: number;
  rootCause: number;
  falseAlarms: number;
  refusals: number;
  asked: number;
}

export function summarizeResults(results: readonly CaseResult[], corpus: readonly IncidentCase[]): Scores {
  const n = results.length;
  const evidenceTotal = results.reduce((s, r) => s + r.evidenceFound.length + r.evidenceMissed.length, 0);
  const faulty = results.filter((r) => !r.healthy);
  const ratio = (a: number, b: number) => (b === 0 ? 1 : Math.round((a / b) * 1000) / 1000);
  void corpus;
  return {
    cases: n,
    entityScore: n === 0 ? 1 : Math.round((results.reduce((s, r) => s + r.entityScore, 0) / n) * 1000) / 1000,
    absenceFromPartialRead: results.reduce((s, r) => s + r.absenceFromPartialRead.length, 0),
    intent: ratio(results.filter((r) => r.intentOk).length, n),
    namespace: ratio(results.filter((r) => r.namespaceOk).length, n),
    keyEvidence: ratio(
      results.reduce((s, r) => s + r.evidenceFound.length, 0),
      evidenceTotal,
    ),
    rootCause: ratio(faulty.filter((r) => r.rootCauseOk).length, faulty.length),
    falseAlarms: results.filter((r) => r.falseAlarm).length,
    refusals: results.filter((r) => r.refused !== undefined).length,
    asked: results.filter((r) => r.asked !== undefined).length,
  };
}
