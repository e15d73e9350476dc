import type { KubeconfigSource } from '../cluster/kubeconfig.js';
import { createClusterReader } from '../cluster/reader.js';
import type { ClusterReader } from '../cluster/types.js';
import { ANALYZERS } from './analyzers/index.js';
import type { AnalyzerRegistry, TemplateRegistry, TriageLogger, TriageRequest } from './engine.js';
import { DEFAULT_TIMEOUT_MS, runTriage } from './engine.js';
import type { TriageEnvelope } from './envelope.js';
import { loadTemplates } from './template-registry.js';

/**
 * The one call the rest of calmops makes: triage a request against a cluster with the shipped templates and
 * analyzers. Give a reader, or a kubeconfig to build the read-only reader from.
 */

export interface TriageOptions {
  reader?: ClusterReader;
  kubeconfig?: KubeconfigSource;
  /** Kubeconfig context (default: its current context). */
  context?: string;
  templates?: TemplateRegistry;
  analyzers?: AnalyzerRegistry;
  logger?: TriageLogger;
}

/** Per-request deadline when the facade builds the reader: no single request may eat the whole triage budget. */
const MAX_REQUEST_TIMEOUT_MS = 10_000;

export async function triage(request: TriageRequest, options: TriageOptions): Promise<TriageEnvelope> {
  let reader = options.reader;
  let cluster = request.cluster;
  if (!reader) {
    if (!options.kubeconfig) throw new TypeError('triage needs a reader or a kubeconfig');
    const kube = createClusterReader({
      kubeconfig: options.kubeconfig,
      ...(options.context ? { context: options.context } : {}),
      requestTimeoutMs: Math.min(MAX_REQUEST_TIMEOUT_MS, request.timeoutMs ?? DEFAULT_TIMEOUT_MS),
    });
    reader = kube;
    cluster ??= kube.context;
  }
  return runTriage(
    { ...request, ...(cluster ? { cluster } : {}) },
    {
      reader,
      templates: options.templates ?? loadTemplates(),
      analyzers: options.analyzers ?? ANALYZERS,
      ...(options.logger ? { logger: options.logger } : {}),
    },
  );
}

export type {
  AnalyzerRegistry,
  EntryResolution,
  TemplateRegistry,
  TriageDeps,
  TriageLogger,
  TriageRequest,
} from './engine.js';
export {
  DEFAULT_STEP_BUDGET,
  DEFAULT_TIMEOUT_MS,
  ENVELOPE_BYTES_LIMIT,
  MAX_STEP_BUDGET,
  runTriage,
  silentLogger,
} from './engine.js';
export type { TriageEnvelope } from './envelope.js';
export { TriageEnvelopeSchema } from './envelope.js';
export { InvalidNamespaceError, InvalidTriageRequestError, UnknownIntentError } from './errors.js';
export { formatReport } from './report.js';
