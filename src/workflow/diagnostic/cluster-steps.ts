import * as z from 'zod';
import { SCOPE_ENTRY } from '../../cluster/read-only-guard.js';
import { ReadSpecSchema } from '../../cluster/read-spec.js';
import { createClusterReader, type KubeClusterReader } from '../../cluster/reader.js';
import { scopeReader } from '../../cluster/scoped-reader.js';
import { ClusterReadError, type ClusterReader, ReadOnlyViolationError } from '../../cluster/types.js';
import { type ClusterEntry, resolveKubeconfig } from '../../config.js';
import { Code, KUBE_NAME_MAX, KubeName, NoteText, SessionId } from '../../limits.js';
import { runSpecialist, type SpecialistCheck } from '../../specialists/index.js';
import { ANALYZERS } from '../../triage/analyze/index.js';
import type { TriageEnvelope } from '../../triage/envelope/index.js';
import { DomainSchema, type Finding } from '../../triage/envelope/index.js';
import { runTriage, type TriageLogger } from '../../triage/index.js';
import { AmbiguousNamespaceError, InvalidNamespaceError, SWEEP_INTENT } from '../../triage/route/index.js';
import type { TemplateRegistry } from '../../triage/templates/index.js';
import { type ReadResult, runRead } from '../reads.js';

/**
 * The cluster reader's steps. They get everything they need in the payload (intent, namespace, cluster, the read)
 * and return compact results; this side has no table and no state machine access, only the read-only kubeconfig.
 */

class UnknownClusterError extends Error {
  override readonly name = 'UnknownClusterError';
}

export interface ClusterDeps {
  clusters: Readonly<Record<string, ClusterEntry>>;
  templates: TemplateRegistry;
  logger: TriageLogger;
  /** Tests inject a reader; otherwise one read-only reader per cluster is built and kept. */
  readerFor?: (cluster: string) => Promise<ClusterReader>;
}

const readers = new WeakMap<ClusterDeps, Map<string, Promise<KubeClusterReader>>>();

/**
 * The session's reader: the cluster's, bound to the session's scope, so every read a step makes (a triage following a
 * dependency, a specialist, a thread read, a hypothesis test) is judged where it is made.
 */
async function readerFor(deps: ClusterDeps, cluster: string, scope: readonly string[]): Promise<ClusterReader> {
  return scopeReader(await clusterReader(deps, cluster), { namespaces: scope });
}

async function clusterReader(deps: ClusterDeps, cluster: string): Promise<ClusterReader> {
  if (deps.readerFor) return deps.readerFor(cluster);
  let cache = readers.get(deps);
  if (!cache) {
    cache = new Map();
    readers.set(deps, cache);
  }
  let reader = cache.get(cluster);
  if (!reader) {
    const entry = deps.clusters[cluster];
    if (!entry) {
      throw new UnknownClusterError(
        `No kubeconfig is configured for cluster "${cluster}" (known: ${Object.keys(deps.clusters).join(', ') || 'none'})`,
      );
    }
    reader = resolveKubeconfig(entry).then((kubeconfig) =>
      createClusterReader({ kubeconfig, requestTimeoutMs: 8_000, userAgent: 'calmops-cluster-reader' }),
    );
    cache.set(cluster, reader);
    reader.catch(() => cache?.delete(cluster));
  }
  return reader;
}

/** The session's namespaces (read-only-guard.ts `ReadScope`); a payload without one reads nothing. */
const Scope = z.array(z.string().regex(SCOPE_ENTRY)).max(50);

const Where = {
  sessionId: SessionId,
  namespace: KubeName,
  cluster: z.string().min(1).max(128),
  scope: Scope,
};

const TriagePayloadSchema = z.object({
  step: z.literal('triage'),
  ...Where,
  /** Empty while the session has none: the triage locates it from the words and the cluster. */
  namespace: z.string().max(KUBE_NAME_MAX),
  intent: Code,
  text: NoteText.optional(),
});
const SpecialistPayloadSchema = z.object({ step: z.literal('specialist'), ...Where, domain: DomainSchema });
const ReadPayloadSchema = z.object({
  step: z.literal('read'),
  sessionId: SessionId,
  scope: Scope,
  request: ReadSpecSchema.extend({ cluster: z.string().min(1).max(128) }),
});
const TestPayloadSchema = z.object({
  step: z.literal('test'),
  sessionId: SessionId,
  scope: Scope,
  hypothesis: z.object({
    id: z.string(),
    code: z.string(),
    summary: z.string(),
    cluster: z.string().min(1).max(128),
    reads: z.array(ReadSpecSchema).max(5),
  }),
});
export const ClusterPayloadSchema = z.discriminatedUnion('step', [
  TriagePayloadSchema,
  SpecialistPayloadSchema,
  ReadPayloadSchema,
  TestPayloadSchema,
]);
export type ClusterPayload = z.infer<typeof ClusterPayloadSchema>;

interface CompactFinding {
  code: string;
  domain: Finding['domain'];
  severity: Finding['severity'];
  resource: Finding['resource'];
  related: Finding['related'];
  message: string;
  evidence: string[];
  confidence: number;
  template: string;
}

/** A triage that could not tell where to look: what the thread shows so that a person can say. */
interface UnlocatedResult {
  unlocated: {
    reason: 'ambiguous' | 'not-found';
    message: string;
    candidates: { namespace: string; why: string }[];
  };
}

export interface SpecialistResult {
  domain: string;
  /** The specialist's analyzers, in the order they ran. */
  templates: string[];
  findings: Array<CompactFinding & { explains?: boolean }>;
  /** What it checked: found, ruled out, or could not read. */
  checks: SpecialistCheck[];
  reads: number;
  budget: number;
}

/** Not knowing where to look is a question for the thread, not a failed step. */
function unlocated(error: AmbiguousNamespaceError | InvalidNamespaceError): UnlocatedResult {
  const candidates =
    error instanceof AmbiguousNamespaceError
      ? error.candidates.slice(0, 5).map((c) => ({ namespace: c.namespace, why: c.why.slice(0, 300) }))
      : [];
  return {
    unlocated: {
      reason: candidates.length > 0 ? 'ambiguous' : 'not-found',
      message: error.message.slice(0, 1000),
      candidates,
    },
  };
}

/**
 * A namespace named by a person or an alert that the cluster does not have is "not found", said in the thread
 * instead of a triage of nothing (which would read as "no fault"). Outside the session's scope it is refused the
 * same way, without reading. A read that cannot tell (no permission on namespaces, a timeout) lets the triage run.
 */
async function namespaceMissing(
  reader: ClusterReader,
  namespace: string,
  cluster: string,
): Promise<UnlocatedResult | undefined> {
  try {
    await reader.get({ kind: 'namespaces', name: namespace }, AbortSignal.timeout(8_000));
    return undefined;
  } catch (error) {
    const shown = namespace.slice(0, 63);
    if (error instanceof ReadOnlyViolationError) {
      return { unlocated: { reason: 'not-found', message: error.message.slice(0, 1000), candidates: [] } };
    }
    if (error instanceof ClusterReadError && error.reason === 'not-found') {
      return {
        unlocated: {
          reason: 'not-found',
          message: `Namespace "${shown}" was not found on cluster ${cluster.slice(0, 128)}: the API server has no such namespace, so nothing there was triaged.`,
          candidates: [],
        },
      };
    }
    return undefined;
  }
}

export async function runClusterStep(deps: ClusterDeps, payload: ClusterPayload): Promise<unknown> {
  switch (payload.step) {
    case 'triage': {
      const reader = await readerFor(deps, payload.cluster, payload.scope);
      const text = payload.text?.trim() ?? '';
      // The sweep stands for "the words name no single intent": routing by the words themselves keeps their
      // suggestions as tie-breakers and explains the choice, which an intent given by id would not.
      const byWords = payload.intent === SWEEP_INTENT && text !== '';
      const locating = payload.namespace === '';
      if (!locating) {
        const missing = await namespaceMissing(reader, payload.namespace, payload.cluster);
        if (missing !== undefined) return missing;
      }
      try {
        const envelope: TriageEnvelope = await runTriage(
          {
            ...(byWords ? {} : { intent: payload.intent }),
            ...(locating ? {} : { namespace: payload.namespace }),
            cluster: payload.cluster,
            ...(text ? { text } : {}),
            timeoutMs: 20_000,
          },
          { reader, templates: deps.templates, analyzers: ANALYZERS, logger: deps.logger },
        );
        return { envelope };
      } catch (error) {
        if (locating && (error instanceof AmbiguousNamespaceError || error instanceof InvalidNamespaceError)) {
          return unlocated(error);
        }
        throw error;
      }
    }
    case 'specialist': {
      const reader = await readerFor(deps, payload.cluster, payload.scope);
      const report = await runSpecialist(reader, {
        domain: payload.domain,
        namespace: payload.namespace,
        signal: AbortSignal.timeout(45_000),
      });
      const result: SpecialistResult = {
        domain: payload.domain,
        templates: report.analyzers,
        findings: report.findings.slice(0, 20).map((f) => ({
          code: f.code,
          domain: f.domain,
          severity: f.severity,
          resource: f.resource,
          related: f.related.slice(0, 5),
          message: f.message.slice(0, 500),
          evidence: f.evidence.slice(0, 2).map((e) => e.slice(0, 300)),
          confidence: f.confidence,
          template: f.analyzer,
          ...(f.explains ? { explains: true } : {}),
        })),
        checks: report.checks.slice(0, 30).map((c) => ({
          analyzer: c.analyzer,
          what: c.what.slice(0, 200),
          outcome: c.outcome,
          detail: c.detail.slice(0, 400),
        })),
        reads: report.reads,
        budget: report.budget,
      };
      return result;
    }
    case 'read': {
      const { cluster, ...spec } = payload.request;
      const reader = await readerFor(deps, cluster, payload.scope);
      return runRead(reader, spec, AbortSignal.timeout(20_000));
    }
    case 'test': {
      const reader = await readerFor(deps, payload.hypothesis.cluster, payload.scope);
      const signal = AbortSignal.timeout(30_000);
      const results: ReadResult[] = await Promise.all(payload.hypothesis.reads.map((r) => runRead(reader, r, signal)));
      return {
        hypothesisId: payload.hypothesis.id,
        results: results.map((r) => ({ ...r, lines: r.lines.slice(-12) })),
      };
    }
  }
}
