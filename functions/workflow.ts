import type { Context } from 'aws-lambda';
import { createStepRuntime, type RuntimeOverrides, type StepRuntime } from '../src/app/workflow-runtime.js';
import { runStep, WORKFLOW_STEPS } from '../src/workflow/dispatch.js';

/**
 * The workflow Lambda: the state machines' non-waiting steps, dispatched by `step`. Configuration is read once per
 * cold start (the channel policy is re-read, cached, per invocation); the payload is validated by the step's schema;
 * errors keep their names for Retry and Catch. Every log line carries the invocation's session and execution.
 */
export type StepHandler = (event: unknown, context?: Context) => Promise<unknown>;

export function createWorkflowHandler(
  env: Readonly<Record<string, string | undefined>> = process.env,
  overrides: RuntimeOverrides = {},
): StepHandler {
  let runtime: Promise<StepRuntime> | undefined;
  return async (event, context) => {
    runtime ??= createStepRuntime(env, overrides);
    runtime.catch(() => {
      runtime = undefined;
    });
    return runStep(WORKFLOW_STEPS, await (await runtime).forInvocation(event, context), event);
  };
}

export const handler: StepHandler = createWorkflowHandler();
