import { Logger } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';
import type { ClusterReader } from '../cluster/types.js';
import { loadConfig } from '../config.js';
import { loadTemplates } from '../triage/templates/index.js';
import type { ClusterDeps } from '../workflow/diagnostic/cluster-steps.js';
import { currentLogger, invocationLogger, runWithLogger, stepCorrelation } from './correlation.js';
import { powertoolsLogPort } from './log-port.js';

export interface ClusterReaderOverrides {
  readerFor?: (cluster: string) => Promise<ClusterReader>;
  logger?: Logger;
}

/**
 * What the cluster reader function keeps per container. It has no table and no Step Functions access: the
 * kubeconfigs, the templates and a logger are all it is given.
 */
export interface ClusterReaderRuntime {
  /** Built on first use and kept, with the cluster clients made for them; a failed build is tried again. */
  deps(): ClusterDeps;
  /** Runs one invocation: every line the deps write inside it carries the invocation's keys. */
  inInvocation<T>(event: unknown, context: Context | undefined, run: () => Promise<T>): Promise<T>;
}

export function createClusterReaderRuntime(
  env: Readonly<Record<string, string | undefined>> = process.env,
  overrides: ClusterReaderOverrides = {},
): ClusterReaderRuntime {
  let deps: ClusterDeps | undefined;
  const base = overrides.logger ?? new Logger({ serviceName: 'calmops' });
  return {
    deps() {
      if (!deps) {
        const config = loadConfig(env, ['clusters']);
        deps = {
          clusters: config.clusters.clusters,
          templates: loadTemplates(),
          // The deps live across invocations; each line goes to the logger of the invocation it belongs to.
          logger: powertoolsLogPort(() => currentLogger(base)),
          ...(overrides.readerFor ? { readerFor: overrides.readerFor } : {}),
        };
      }
      return deps;
    },
    inInvocation(event, context, run) {
      return runWithLogger(invocationLogger(base, stepCorrelation(event), context), run);
    },
  };
}
