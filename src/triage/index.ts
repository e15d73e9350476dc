import type { KubeconfigSource } from '../cluster/kubeconfig.js';
import { createClusterReader, type KubeClusterReader } from '../cluster/reader.js';
import type { ClusterReader } from '../cluster/types.js';
import { ANALYZERS } from './analyze/index.js';
import type { AnalyzerRegistry, TemplateRegistry, TriageLogger, TriageRequest } from './engine.js';
import { DEFAULT_TIMEOUT_MS, runTriage } from './engine.js';
import type { TriageEnvelope } from './envelope/envelope.js';
import { loadTemplates } from './templates/template-registry.js';

/**
 * The one call the rest of calmops makes: triage a request against a cluster with the shipped templates and
 * analyzers, through the reader given (see `triageReader` for one built from a kubeconfig).
 */

export interface TriageOptions {
  reader: ClusterReader;
  templates?: TemplateRegistry;
  analyzers?: AnalyzerRegistry;
  logger?: TriageLogger;
}

/** Per-request deadline of a reader built for a triage: no single request may eat the whole triage budget. */
const MAX_REQUEST_TIMEOUT_MS = 10_000;

/** The read-only reader of a kubeconfig, with its per-request deadline bounded by the triage's own timeout. */
export function triageReader(
  kubeconfig: KubeconfigSource,
  options: { context?: string; timeoutMs?: number } = {},
): KubeClusterReader {
  return createClusterReader({
    kubeconfig,
    ...(options.context ? { context: options.context } : {}),
    requestTimeoutMs: Math.min(MAX_REQUEST_TIMEOUT_MS, options.timeoutMs ?? DEFAULT_TIMEOUT_MS),
  });
}

export async function triage(request: TriageRequest, options: TriageOptions): Promise<TriageEnvelope> {
  return runTriage(request, {
    reader: options.reader,
    templates: options.templates ?? loadTemplates(),
    analyzers: options.analyzers ?? ANALYZERS,
    ...(options.logger ? { logger: options.logger } : {}),
  });
}

export type { TriageLogger, TriageRequest } from './engine.js';
export {
  DEFAULT_STEP_BUDGET,
  DEFAULT_TIMEOUT_MS,
  MAX_STEP_BUDGET,
  runTriage,
  silentLogger,
} from './engine.js';
export type { TriageEnvelope } from './envelope/envelope.js';
export { formatReport } from './envelope/report.js';
