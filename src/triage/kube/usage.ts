import type { KubeObject } from '../../cluster/types.js';
import type { AnalyzerContext } from '../analyze/analyzer.js';
import { formatBytes, formatCpu, parseQuantity } from './quantity.js';

/**
 * Measured usage (metrics.k8s.io) as the analyzers weigh it against requests, limits and allocatable: CPU in cores,
 * memory in bytes (the working set metrics-server reports).
 */

export interface Usage {
  cpu: number;
  memory: number;
}

function usageOf(value: unknown): Usage | undefined {
  const usage = value as { cpu?: unknown; memory?: unknown } | undefined;
  const cpu = parseQuantity(usage?.cpu);
  const memory = parseQuantity(usage?.memory);
  return cpu === undefined || memory === undefined ? undefined : { cpu, memory };
}

/** What one container of a pod uses now, when the pod was measured. */
export function containerUsage(ctx: AnalyzerContext, pod: KubeObject, container: string): Usage | undefined {
  const metrics = ctx.usage?.('pods', pod.metadata.name, pod.metadata.namespace);
  const entry = (Array.isArray(metrics?.['containers']) ? metrics['containers'] : []).find(
    (c: { name?: string }) => c.name === container,
  );
  return usageOf(entry?.usage);
}

/** What a node uses now, when it was measured. */
export function nodeUsage(ctx: AnalyzerContext, node: string): Usage | undefined {
  return usageOf(ctx.usage?.('nodes', node)?.['usage']);
}

/** `243Mi of its 256Mi limit (95%)`. */
export function shareOf(used: number, of: number, resource: 'cpu' | 'memory', what: string): string {
  const format = resource === 'cpu' ? formatCpu : formatBytes;
  return `${format(used)} of ${what} ${format(of)} (${of > 0 ? Math.round((used / of) * 100) : 0}%)`;
}
