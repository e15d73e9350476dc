import type { KubeObject, ResourceKind } from '../../cluster/types.js';
import type { Domain, FindingInput } from '../envelope/findings.js';

/**
 * What an analyzer sees: everything the template's reads brought back, indexed by kind, plus logs.
 * Analyzers are pure functions of this context (no I/O), which keeps triage deterministic and testable.
 */
export interface AnalyzerContext {
  namespace: string;
  /** The instant analysis treats as "now": `--now`, the newest timestamp in a snapshot, or the wall clock. */
  now: Date;
  objects(kind: ResourceKind): readonly KubeObject[];
  /**
   * Log text for a container, `previous` for the last terminated instance. Undefined when not read. `namespace`
   * defaults to the analysed namespace (cluster add-ons such as CoreDNS live elsewhere).
   */
  log(pod: string, container: string, previous?: boolean, namespace?: string): string | undefined;
  /** Kinds whose reads failed: analyzers stay quiet about what they could not see rather than guessing. */
  unavailable: ReadonlySet<ResourceKind>;
  /**
   * Measured usage from metrics.k8s.io: a pod's PodMetrics (namespace defaults to the analysed one) or a node's
   * NodeMetrics. Undefined where the Metrics API is not served or the object was not measured.
   */
  usage?(kind: 'pods' | 'nodes', name: string, namespace?: string): KubeObject | undefined;
}

/** One analyzer per concern, in the manner of k8sgpt's analyzers: a name, what it needs, and a pure analyze(). */
export interface Analyzer {
  readonly name: string;
  readonly domain: Domain;
  readonly description: string;
  /** Kinds the analyzer reads; the engine warns when a template runs an analyzer without reading these. */
  readonly needs: readonly ResourceKind[];
  analyze(ctx: AnalyzerContext): FindingInput[];
}
