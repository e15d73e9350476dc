import { Logger } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';
import type { ClusterReader } from '../src/cluster/types.js';
import { loadConfig } from '../src/config.js';
import { currentLogger, invocationLogger, runWithLogger, stepCorrelation } from '../src/logging/correlation.js';
import { loadTemplates } from '../src/triage/template-registry.js';
import { type ClusterDeps, ClusterPayloadSchema, runClusterStep } from '../src/workflow/diagnostic/cluster-steps.js';
import { StepPayloadError } from '../src/workflow/step-errors.js';

/**
 * The cluster reader Lambda: runs a template's reads or a targeted read with the read-only kubeconfig and returns
 * compact evidence. It has no table and no Step Functions access: everything it needs arrives in the payload.
 */
export type ClusterReaderHandler = (event: unknown, context?: Context) => Promise<unknown>;

export function createClusterReaderHandler(
  env: Readonly<Record<string, string | undefined>> = process.env,
  overrides: { readerFor?: (cluster: string) => Promise<ClusterReader>; logger?: Logger } = {},
): ClusterReaderHandler {
  let deps: ClusterDeps | undefined;
  const base = overrides.logger ?? new Logger({ serviceName: 'calmops' });
  return async (event, context) => {
    if (!deps) {
      const config = loadConfig(env, ['clusters']);
      // The deps (and the cluster clients kept for them) live across invocations; each line goes to the logger
      // of the invocation it belongs to.
      const logger = () => currentLogger(base);
      deps = {
        clusters: config.clusters.clusters,
        templates: loadTemplates(),
        logger: { info: (m, e) => logger().info(m, e ?? {}), warn: (m, e) => logger().warn(m, e ?? {}) },
        ...(overrides.readerFor ? { readerFor: overrides.readerFor } : {}),
      };
    }
    const ready = deps;
    const parsed = ClusterPayloadSchema.safeParse(event);
    if (!parsed.success) {
      const step = typeof event === 'object' && event !== null ? String((event as { step?: unknown }).step) : '?';
      throw new StepPayloadError(
        `[${step}] invalid payload: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'} ${i.message}`).join('; ')}`,
      );
    }
    try {
      const logger = invocationLogger(base, stepCorrelation(event), context);
      return await runWithLogger(logger, () => runClusterStep(ready, parsed.data));
    } catch (error) {
      if (error instanceof Error && !error.message.startsWith('['))
        error.message = `[${parsed.data.step}] ${error.message}`;
      throw error;
    }
  };
}

export const handler: ClusterReaderHandler = createClusterReaderHandler();
