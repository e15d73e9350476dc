import type { Context } from 'aws-lambda';
import { type ClusterReaderOverrides, createClusterReaderRuntime } from '../src/app/cluster-reader-runtime.js';
import { ClusterPayloadSchema, runClusterStep } from '../src/workflow/diagnostic/cluster-steps.js';
import { StepPayloadError } from '../src/workflow/step-errors.js';

/**
 * The cluster reader Lambda: runs a template's reads or a targeted read with the read-only kubeconfig and returns
 * compact evidence. It has no table and no Step Functions access: everything it needs arrives in the payload.
 */
export type ClusterReaderHandler = (event: unknown, context?: Context) => Promise<unknown>;

export function createClusterReaderHandler(
  env: Readonly<Record<string, string | undefined>> = process.env,
  overrides: ClusterReaderOverrides = {},
): ClusterReaderHandler {
  const runtime = createClusterReaderRuntime(env, overrides);
  return async (event, context) => {
    const deps = runtime.deps();
    const parsed = ClusterPayloadSchema.safeParse(event);
    if (!parsed.success) {
      const step = typeof event === 'object' && event !== null ? String((event as { step?: unknown }).step) : '?';
      throw new StepPayloadError(
        `[${step}] invalid payload: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'} ${i.message}`).join('; ')}`,
      );
    }
    try {
      return await runtime.inInvocation(event, context, () => runClusterStep(deps, parsed.data));
    } catch (error) {
      if (error instanceof Error && !error.message.startsWith('['))
        error.message = `[${parsed.data.step}] ${error.message}`;
      throw error;
    }
  };
}

export const handler: ClusterReaderHandler = createClusterReaderHandler();
