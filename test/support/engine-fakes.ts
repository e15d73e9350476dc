import { StoredObject } from '../../src/cluster/stored-object.js';
import type {
  ClusterReader,
  GetQuery,
  KubeObject,
  ListQuery,
  LogQuery,
  ReadFailureReason,
  ResourceKind,
} from '../../src/cluster/types.js';
import { ClusterReadError } from '../../src/cluster/types.js';
import {
  matchesFields,
  matchesLabels,
  parseFieldSelector,
  parseLabelSelector,
} from '../../src/snapshot-api/selectors.js';
import type { Analyzer } from '../../src/triage/analyze/analyzer.js';
import type { EntryResolution, TemplateRegistry, TriageLogger } from '../../src/triage/engine.js';
import type { FindingInput } from '../../src/triage/envelope/findings.js';
import type { TriageTemplate } from '../../src/triage/templates/template-schema.js';
import { TemplateSchema } from '../../src/triage/templates/template-schema.js';

/** An in-memory cluster for engine tests: objects by kind, optional per-kind latency and failures. */
export interface FakeReaderOptions {
  objects: Partial<Record<ResourceKind, KubeObject[]>>;
  logs?: Record<string, string>;
  latencyMs?: number;
  fail?: Partial<Record<ResourceKind | 'logs', ReadFailureReason | 'crash'>>;
  /** Kinds whose reads never answer and ignore the abort signal. */
  hang?: Array<ResourceKind | 'logs'>;
}

export interface FakeReader extends ClusterReader {
  calls: Array<{ op: 'list' | 'get' | 'logs'; query: ListQuery | GetQuery | LogQuery }>;
  maxInFlight: number;
}

function matchesLabelSelector(o: KubeObject, selector: string | undefined): boolean {
  return matchesLabels(parseLabelSelector(selector ?? ''), o.metadata.labels);
}

export function fakeReader(options: FakeReaderOptions): FakeReader {
  let inFlight = 0;
  const reader: FakeReader = {
    calls: [],
    maxInFlight: 0,
    list: (query, signal) => {
      reader.calls.push({ op: 'list', query });
      return respond(query.kind, signal, () =>
        (options.objects[query.kind] ?? []).filter(
          (o) =>
            (query.namespace === undefined ||
              o.metadata.namespace === undefined ||
              o.metadata.namespace === query.namespace) &&
            matchesFields(query.kind, parseFieldSelector(query.fieldSelector ?? ''), StoredObject.of(o)) &&
            matchesLabelSelector(o, query.labelSelector),
        ),
      );
    },
    get: (query, signal) => {
      reader.calls.push({ op: 'get', query });
      return respond(query.kind, signal, () => {
        const found = (options.objects[query.kind] ?? []).find((o) => o.metadata.name === query.name);
        if (!found) throw new ClusterReadError(`${query.kind} "${query.name}" not found`, 'not-found', 404);
        return found;
      });
    },
    logs: (query, signal) => {
      reader.calls.push({ op: 'logs', query });
      return respond('logs', signal, () => {
        const key = `${query.namespace}/${query.pod}/${query.container ?? ''}${query.previous ? ':previous' : ''}`;
        const text = options.logs?.[key];
        if (text === undefined) throw new ClusterReadError(`no logs for ${key}`, 'not-found', 404);
        return text;
      });
    },
  };

  async function respond<T>(kind: ResourceKind | 'logs', signal: AbortSignal | undefined, value: () => T): Promise<T> {
    inFlight++;
    reader.maxInFlight = Math.max(reader.maxInFlight, inFlight);
    try {
      if (options.hang?.includes(kind)) await new Promise(() => {});
      if (options.latencyMs) await new Promise((r) => setTimeout(r, options.latencyMs));
      if (signal?.aborted) throw new ClusterReadError('aborted', 'timeout');
      const failure = options.fail?.[kind];
      if (failure === 'crash') throw new TypeError('socket hang up');
      if (failure) throw new ClusterReadError(`cannot read ${kind}: ${failure}`, failure, 403);
      return value();
    } finally {
      inFlight--;
    }
  }
  return reader;
}

export function registry(...templates: TriageTemplate[]): TemplateRegistry {
  const byId = new Map(templates.map((t) => [t.id, t]));
  return { get: (id) => byId.get(id), list: () => templates, ids: () => templates.map((t) => t.id) };
}

export function template(overrides: Record<string, unknown>): TriageTemplate {
  return TemplateSchema.parse({
    id: 'demo',
    version: 1,
    title: 'Demo triage',
    domain: 'compute',
    description: 'A template for engine tests.',
    synonyms: ['demo', 'example', 'sample'],
    examples: ['demo in shop'],
    analyzers: ['demo'],
    nextActions: [],
    ...overrides,
  });
}

export function analyzer(name: string, produce: Analyzer['analyze'], needs: Analyzer['needs'] = []): Analyzer {
  return { name, domain: 'compute', description: name, needs, analyze: produce };
}

export function finding(overrides: Partial<FindingInput> & Pick<FindingInput, 'code'>): FindingInput {
  return {
    analyzer: 'demo',
    domain: 'compute',
    severity: 'high',
    resource: { kind: 'Pod', name: 'web-1', namespace: 'shop' },
    message: `${overrides.code} on web-1`,
    evidence: [],
    confidence: 0.9,
    ...overrides,
  };
}

/** A dictionary stand-in: matches an intent id or synonym in the text and a namespace after "in". */
export function resolveEntry(text: string, templates: TemplateRegistry): EntryResolution {
  const lower = text.toLowerCase();
  const hit = templates.list().find((t) => lower.includes(t.id) || t.synonyms.some((s) => lower.includes(s)));
  const ns = /\bin ([a-z0-9-]+)/.exec(lower)?.[1];
  return {
    ...(hit ? { intent: hit.id } : {}),
    ...(ns ? { namespace: ns } : {}),
    confidence: hit ? 0.9 : 0.1,
    why: hit ? `matched "${hit.id}"` : 'nothing matched',
    suggestions: hit ? [] : templates.ids().slice(0, 2),
    ambiguous: false,
    triggerMode: 'replace',
  };
}

export function memoryLogger(): TriageLogger & { lines: string[]; warnings: string[] } {
  const lines: string[] = [];
  const warnings: string[] = [];
  return { lines, warnings, info: (m) => lines.push(m), warn: (m) => warnings.push(m) };
}

export function pod(name: string, extra: { phase?: string; restarts?: number; labels?: Record<string, string> } = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'shop',
      uid: `uid-${name}`,
      creationTimestamp: '2025-01-01T10:00:00Z',
      ...(extra.labels ? { labels: extra.labels } : {}),
    },
    spec: { containers: [{ name: 'app' }, { name: 'sidecar' }] },
    status: {
      phase: extra.phase ?? 'Running',
      containerStatuses: [
        { name: 'app', ready: (extra.restarts ?? 0) === 0, restartCount: extra.restarts ?? 0 },
        { name: 'sidecar', ready: true, restartCount: 0 },
      ],
    },
  } satisfies KubeObject;
}
